// Claim, release and resolve made without a network (a freezer, the back of the racking) wait
// here, in localStorage, and are sent once, in order, when the network is back. Each keeps the
// Idempotency-Key it was made with, so a send whose answer was lost and is sent again is
// answered by the server instead of being done twice.

import { ApiError } from "./api.js";

// An action the server keeps failing (not the network: a 500) is given up after this many tries.
const MAX_ATTEMPTS = 20;

export class ActionQueue {
  /**
   * send(item) posts one action and resolves with the server's answer (or throws ApiError);
   * onSettled(item, answer, error) hears the outcome of each; onChange() any change of the queue.
   */
  constructor({ userId, send, onSettled, onChange }) {
    this.storageKey = `wms-notify:${userId}:queue`;
    this.send = send;
    this.onSettled = onSettled;
    this.onChange = onChange;
    this.flushing = null;
    // Another tab of the same user changed the queue.
    window.addEventListener("storage", (event) => {
      if (event.key === this.storageKey) this.onChange();
    });
  }

  get items() {
    try {
      const items = JSON.parse(window.localStorage.getItem(this.storageKey) ?? "[]");
      return Array.isArray(items) ? items : [];
    } catch {
      return [];
    }
  }

  #save(items) {
    try {
      if (items.length) window.localStorage.setItem(this.storageKey, JSON.stringify(items));
      else window.localStorage.removeItem(this.storageKey);
    } catch {
      // Storage full or unavailable: the queue lives as long as this page then.
    }
    this.onChange();
  }

  /** Keep an action for later: {action, id, warehouse, key}. */
  add(item) {
    this.#save([...this.items, { ...item, attempts: 0, queuedAt: new Date().toISOString() }]);
  }

  /** The queued actions of one notification, oldest first. */
  of(id) {
    return this.items.filter((item) => item.id === id);
  }

  /**
   * Send what waits, oldest first, each until the server answers it. Stops at the first that
   * gets no answer (still offline), keeping it and the rest for the next try. One flush at a
   * time in this page, and across the user's tabs (Web Locks) where the browser has them.
   */
  flush() {
    if (!this.items.length) return Promise.resolve();
    if (!this.flushing) {
      const run = () => this.#flushNow();
      const locked = navigator.locks?.request
        ? navigator.locks.request(this.storageKey, run)
        : run();
      this.flushing = locked.finally(() => {
        this.flushing = null;
      });
    }
    return this.flushing;
  }

  async #flushNow() {
    for (;;) {
      const [item] = this.items; // read again each time: another tab may have sent some
      if (!item) return;
      let answer = null;
      let failure = null;
      try {
        answer = await this.send(item);
      } catch (error) {
        failure = error;
      }
      const unanswered = failure instanceof ApiError && failure.transient;
      if (unanswered && item.attempts + 1 < MAX_ATTEMPTS) {
        this.#save(this.items.map((i) => (i.key === item.key
          ? { ...i, attempts: i.attempts + 1 } : i)));
        return; // still no network (or a server in trouble): try again later
      }
      this.#save(this.items.filter((i) => i.key !== item.key));
      this.onSettled(item, answer, failure);
    }
  }
}
