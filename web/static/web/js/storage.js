// What the page remembers in localStorage, per signed-in user: the chosen warehouse and the
// poll cursor of each warehouse. Storage can be unavailable (private mode, quota): then the
// page simply starts fresh each time.

export class Memory {
  constructor(userId) {
    this.prefix = `wms-notify:${userId}:`;
  }

  #get(key) {
    try {
      return window.localStorage.getItem(this.prefix + key);
    } catch {
      return null;
    }
  }

  #set(key, value) {
    try {
      window.localStorage.setItem(this.prefix + key, String(value));
    } catch {
      // Nothing to do: the page works without memory.
    }
  }

  get warehouse() {
    const value = Number.parseInt(this.#get("warehouse") ?? "", 10);
    return Number.isFinite(value) ? value : null;
  }

  set warehouse(id) {
    this.#set("warehouse", id);
  }

  /** The list's filter last chosen (all, open, mine, critical, resolved). */
  get filter() {
    return this.#get("filter");
  }

  set filter(name) {
    this.#set("filter", name);
  }

  cursor(warehouseId) {
    const value = Number.parseInt(this.#get(`cursor:${warehouseId}`) ?? "", 10);
    return Number.isFinite(value) ? value : null;
  }

  setCursor(warehouseId, cursor) {
    if (Number.isFinite(cursor)) this.#set(`cursor:${warehouseId}`, cursor);
  }

  forgetCursor(warehouseId) {
    try {
      window.localStorage.removeItem(`${this.prefix}cursor:${warehouseId}`);
    } catch {
      // Nothing to do: the page works without memory.
    }
  }
}
