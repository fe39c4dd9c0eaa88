// Who is on shift now in the shown warehouse (SPEC 13), in the bell's panel: for each role with
// shifts there, its running shift and the people on it, or when it is next on. From
// GET /api/v1/shifts/on-now/, which answers staff and members of those roles (others 404:
// the section stays hidden). Fetched each time the panel opens, so it follows the clock.

import { get } from "./api.js";
import { byId, h, replaceChildren } from "./dom.js";
import { format, shortTime } from "./i18n.js";

export class OnShift {
  constructor({ url }) {
    this.url = url;
    this.section = byId("on-shift");
    this.list = byId("on-shift-list");
    this.warehouseId = null;
    this.asked = 0; // answers to an older question (another warehouse) are dropped
  }

  setWarehouse(id) {
    this.warehouseId = id;
    if (this.section) this.section.hidden = true;
  }

  async refresh() {
    if (!this.section || this.warehouseId === null) return;
    const warehouseId = this.warehouseId;
    const asked = ++this.asked;
    let answer;
    try {
      answer = await get(this.url, { warehouse: warehouseId });
    } catch (error) {
      // 404: not for me here. No network: what was shown (if anything) stays.
      if (error?.status === 404 && asked === this.asked) this.section.hidden = true;
      return;
    }
    if (asked !== this.asked || warehouseId !== this.warehouseId) return;
    const rows = answer.results.map((row) => this.#row(row));
    replaceChildren(this.list, rows.length ? rows
      : [h("li", { className: "on-shift-role muted" },
           gettext("No shifts in this warehouse: everyone is on."))]);
    this.section.hidden = false;
  }

  #row({ role, shift, members, next_start: nextStart }) {
    let head;
    if (shift) {
      head = format(gettext("%(role)s · %(shift)s until %(time)s"),
                    { role: role.name, shift: shift.name, time: shortTime(new Date(shift.ends)) });
    } else if (nextStart) {
      head = format(gettext("%(role)s · off shift until %(time)s"),
                    { role: role.name, time: shortTime(new Date(nextStart)) });
    } else {
      head = format(gettext("%(role)s · off shift"), { role: role.name });
    }
    const people = members.map((m) => m.username).join(", ");
    return h("li", { className: shift ? "on-shift-role" : "on-shift-role is-off" },
      h("span", { className: "on-shift-head" }, head),
      shift ? h("span", { className: "on-shift-members" },
                people || gettext("Nobody in this role")) : null);
  }
}
