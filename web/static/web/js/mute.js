// My mute of the shown warehouse (SPEC 17), in the bell's panel: "Mute non-critical for 1 h",
// "Mute until my shift ends" (offered only while I am on a shift there, from
// GET /api/v1/shifts/on-now/), and while a mute lasts, what it holds back and until when, with
// "End mute". PUT / GET / DELETE /api/v1/mute/. The server leaves what is muted out of my
// counts; the page marks it as not unread for me (lifecycle.js setMute) and asks again when
// the mute ends by itself.

import { del, describeError, get, put } from "./api.js";
import { byId } from "./dom.js";
import { absoluteTime, format, shortTime } from "./i18n.js";
import { setMute } from "./lifecycle.js";

const HOUR_MS = 3_600_000;

export class MuteControl {
  constructor({ url, onShiftUrl, me, onChange }) {
    this.url = url;
    this.onShiftUrl = onShiftUrl;
    this.me = me;
    this.onChange = onChange; // the mute changed: redraw and ask the server again
    this.section = byId("mute");
    this.status = byId("mute-status");
    this.hourButton = byId("mute-hour");
    this.shiftButton = byId("mute-shift");
    this.endButton = byId("mute-end");
    this.error = byId("mute-error");
    this.warehouseId = null;
    this.mute = null; // {until: Date, below: "warning" | "critical"}
    this.shiftEnds = null; // Date: the end of my shift running now here, or null
    this.asked = 0; // answers to an older question (another warehouse) are dropped
    this.timer = null;
    this.hourButton?.addEventListener("click", () => this.#set(new Date(Date.now() + HOUR_MS)));
    this.shiftButton?.addEventListener("click", () => {
      if (this.shiftEnds) this.#set(this.shiftEnds);
    });
    this.endButton?.addEventListener("click", () => this.#end());
  }

  setWarehouse(id) {
    this.warehouseId = id;
    this.shiftEnds = null;
    this.#apply(null, { quiet: true });
    void this.refresh();
  }

  /** Ask for my mute and my shift here (the panel opened, the warehouse changed). */
  async refresh() {
    if (!this.section || this.warehouseId === null) return;
    const warehouseId = this.warehouseId;
    const asked = ++this.asked;
    const [mute, shifts] = await Promise.allSettled([
      get(this.url, { warehouse: warehouseId }),
      get(this.onShiftUrl, { warehouse: warehouseId }),
    ]);
    if (asked !== this.asked || warehouseId !== this.warehouseId) return;
    // No shifts of mine here (404), or none running: no "until my shift ends".
    this.shiftEnds = shifts.status === "fulfilled" ? this.#myShiftEnd(shifts.value) : null;
    if (mute.status === "fulfilled") this.#apply(mute.value.mute);
    else if (mute.reason?.status === 404) this.section.hidden = true; // not mine to mute
    else this.#render(); // no network: what was known stays
  }

  /** The latest end of a shift running now that has me on it. */
  #myShiftEnd(answer) {
    let latest = null;
    for (const row of answer?.results ?? []) {
      if (!row.shift || !row.members.some((member) => member.id === this.me.id)) continue;
      const ends = new Date(row.shift.ends);
      if (ends > new Date() && (latest === null || ends > latest)) latest = ends;
    }
    return latest;
  }

  async #set(until) {
    this.#say("");
    try {
      const answer = await put(this.url, {
        warehouse: this.warehouseId, until: until.toISOString(), below: "critical",
      });
      this.#apply(answer.mute);
    } catch (error) {
      this.#say(describeError(error));
    }
  }

  async #end() {
    this.#say("");
    try {
      await del(this.url, { warehouse: this.warehouseId });
      this.#apply(null);
    } catch (error) {
      this.#say(describeError(error));
    }
  }

  #apply(raw, { quiet = false } = {}) {
    const mute = raw ? { until: new Date(raw.until), below: raw.below } : null;
    const before = this.mute ? `${this.mute.until.getTime()}/${this.mute.below}` : "";
    const after = mute ? `${mute.until.getTime()}/${mute.below}` : "";
    this.mute = mute;
    setMute(mute);
    window.clearTimeout(this.timer);
    if (mute) {
      // It ends by itself: the page shows that at once and asks the server for the counts.
      const left = Math.max(0, mute.until.getTime() - Date.now());
      this.timer = window.setTimeout(() => this.#apply(null), Math.min(left, 2 ** 31 - 1));
    }
    this.#render();
    if (!quiet && before !== after) this.onChange();
  }

  #render() {
    if (!this.section) return;
    const mute = this.mute;
    if (mute) {
      const time = shortTime(mute.until);
      this.status.textContent = mute.below === "warning"
        ? format(gettext("Muted below warning until %(time)s"), { time })
        : format(gettext("Muted below critical until %(time)s"), { time });
      this.status.title = absoluteTime(mute.until);
    } else {
      this.status.textContent = "";
      this.status.removeAttribute("title");
    }
    this.status.hidden = !mute;
    this.endButton.hidden = !mute;
    this.hourButton.hidden = Boolean(mute);
    this.shiftButton.hidden = Boolean(mute) || this.shiftEnds === null;
    if (this.shiftEnds) this.shiftButton.title = absoluteTime(this.shiftEnds);
    this.section.hidden = false;
  }

  #say(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}
