// Instant delivery: one Server-Sent Events stream (EventSource) for the chosen warehouse, with
// polling as the fall-back. While the stream is live, notifications and chat messages arrive
// as they happen and the poll loop only reconciles now and then; when the stream fails, is
// refused (404 under a plain WSGI server, 503) or never gets through (a buffering proxy),
// the page polls as before and tries the stream again later.

const OPEN_TIMEOUT_MS = 5000; // no `ready` by then: a proxy is holding the stream back
const RETRY_MIN_MS = 15_000;
const RETRY_MAX_MS = 300_000;

export class LiveStream {
  /**
   * url: the stream endpoint. cursorOf(warehouseId): where the page's notifications stand.
   * onReady(): the stream (re)started; catch up on anything that does not replay (chat).
   * onNotification(note), onChat({chat, message}): pushed events.
   * onReminder(note): an alert nobody claimed, reminded (SPEC 14; no new cursor).
   * onClaimExpired(note): my claim of it was let go by the system (SPEC 17; no new cursor).
   * onReset(warehouseId): the stream cannot replay from the cursor; reload from scratch.
   * onMode("live" | "polling"): which way updates arrive now.
   */
  constructor({
    url, cursorOf, onReady, onNotification, onChat, onMode, onReset, onReminder, onClaimExpired,
  }) {
    this.url = url;
    this.onReset = onReset ?? (() => {});
    this.cursorOf = cursorOf;
    this.onReady = onReady;
    this.onNotification = onNotification;
    this.onReminder = onReminder ?? (() => {});
    this.onClaimExpired = onClaimExpired ?? (() => {});
    this.onChat = onChat;
    this.onMode = onMode;
    this.source = null;
    this.warehouseId = null;
    this.mode = null;
    this.failures = 0;
    this.openTimer = null;
    this.retryTimer = null;
    this.supported = typeof window.EventSource === "function";
  }

  /** Follow this warehouse (closing the stream of the previous one). */
  follow(warehouseId) {
    this.warehouseId = warehouseId;
    this.failures = 0;
    this.#open();
  }

  #open() {
    this.#close();
    if (!this.supported || this.warehouseId === null) {
      this.#setMode("polling");
      return;
    }
    const target = new URL(this.url, window.location.origin);
    target.searchParams.set("warehouse", String(this.warehouseId));
    const cursor = this.cursorOf(this.warehouseId);
    // The browser sends Last-Event-ID on its own reconnects; this covers the first connect.
    if (cursor !== null) target.searchParams.set("since", String(cursor));
    const source = new EventSource(target);
    this.source = source;
    this.openTimer = window.setTimeout(() => this.#fail(), OPEN_TIMEOUT_MS);
    source.addEventListener("ready", () => {
      window.clearTimeout(this.openTimer);
      this.failures = 0;
      this.#setMode("live");
      this.onReady();
    });
    source.addEventListener("notification", (event) => this.onNotification(JSON.parse(event.data)));
    source.addEventListener("chat", (event) => this.onChat(JSON.parse(event.data)));
    source.addEventListener("reminder", (event) => this.onReminder(JSON.parse(event.data)));
    source.addEventListener("claim_expired",
      (event) => this.onClaimExpired(JSON.parse(event.data)));
    // Sent before `ready` when the cursor is too old to replay from (SPEC 11).
    source.addEventListener("reset", () => this.onReset(this.warehouseId));
    source.addEventListener("error", () => {
      if (source !== this.source) return;
      if (source.readyState === EventSource.CLOSED) {
        this.#fail(); // refused (an HTTP error): the browser will not retry by itself
      } else {
        // The stream ended (Redis went away, the server restarts, the stream's time is up):
        // the browser reconnects with Last-Event-ID; meanwhile, poll.
        this.#setMode("polling");
        window.clearTimeout(this.openTimer);
        this.openTimer = window.setTimeout(() => this.#fail(), OPEN_TIMEOUT_MS * 2);
      }
    });
  }

  #fail() {
    this.#close();
    this.#setMode("polling");
    this.failures += 1;
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(this.failures - 1, 8));
    this.retryTimer = window.setTimeout(() => this.#open(), delay * (0.8 + Math.random() * 0.4));
  }

  #close() {
    window.clearTimeout(this.openTimer);
    window.clearTimeout(this.retryTimer);
    if (this.source) {
      this.source.close();
      this.source = null;
    }
  }

  #setMode(mode) {
    if (mode === this.mode) return;
    this.mode = mode;
    this.onMode(mode);
  }
}
