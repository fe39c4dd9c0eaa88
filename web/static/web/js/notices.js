// Notices everyone must read (SPEC 15), pinned above the alerts: each notice of the shown
// warehouse that asks me to acknowledge its current version, with "I have read this" (44 px,
// like every button). Acknowledging records it once on the server (a second tap answers the
// first time); a notice edited meanwhile (409) comes back with its new text to read again.
// Those allowed (staff, the notice's escalation role) also get its roster: who has read it,
// when, and who is on shift now, with the CSV export.
//
// A notice's own notification in the inbox is read, not handled: it offers no Claim or
// Resolve (the API refuses them), and "I have read this" also reads it (the server does, and
// the page polls at once so the badge drops). When a notice is missed, its escalation reaches
// the escalation role as sentences in the page's language, said again from the notification's
// `data` (the stored title and body are in the language of the worker that published it; the
// English texts are notices/wording.py's), with a link to the roster.
//
// Titles, bodies and names are typed by people: they go into the page as text only (dom.js).

import { ApiError, describeError, get, post } from "./api.js";
import { byId, h, replaceChildren } from "./dom.js";
import { LANG, format, timeElement } from "./i18n.js";
import { severityChip } from "./lifecycle.js";

export const NOTICE_TYPE = "NOTICE";

/** A notice's notification (its version, a reminder, or its escalation). */
export function isNotice(note) {
  return note?.message_type === NOTICE_TYPE;
}

function isEscalation(note) {
  return isNotice(note) && note.data?.escalation === true
    && Number.isInteger(note.data?.missing_count) && Number.isInteger(note.data?.notice_id);
}

const NAMES = new Intl.ListFormat(LANG, { style: "long", type: "conjunction" });

function missingNames(data) {
  const names = (Array.isArray(data.missing) ? data.missing : []).filter(
    (name) => typeof name === "string");
  const more = data.missing_count - names.length;
  if (more > 0) {
    names.push(format(ngettext("%(count)s more", "%(count)s more", more), { count: more }));
  }
  return NAMES.format(names);
}

/** Its title in the page's language (an escalation's from `data`; others as stored). */
export function noticeTitle(note) {
  if (!isEscalation(note)) return note.title;
  return format(gettext("Not read in time: %(title)s"),
                { title: typeof note.data.title === "string" ? note.data.title : note.title });
}

/** Its text: an escalation says who has not read it, in a sentence; others as stored. */
export function noticeSummary(note) {
  if (!isEscalation(note)) return note.body;
  const count = note.data.missing_count;
  return format(ngettext(
    "%(count)s person has not read version %(version)s by its due time: %(names)s.",
    "%(count)s people have not read version %(version)s by its due time: %(names)s.", count),
  { count, version: note.data.version, names: missingNames(note.data) });
}

/** No Claim or Resolve: an escalation links to the roster; a notice is read above the list. */
export function noticeActions(note) {
  if (!isEscalation(note)) return [];
  return [h("button", {
    type: "button",
    className: "btn btn-small notice-roster-button",
    dataset: {
      noticeRoster: String(note.data.notice_id),
      title: typeof note.data.title === "string" ? note.data.title : note.title,
    },
  }, gettext("Who has read it"))];
}

function mustRead(notice) {
  return notice.in_audience && notice.requires_ack && !notice.is_closed && notice.my_ack === null;
}

export class Notices {
  /** `onRead`: called once a notice is acknowledged (its notifications are read by then). */
  constructor({ url, toasts, onRead = () => {} }) {
    this.url = url;
    this.toasts = toasts;
    this.onRead = onRead;
    this.section = byId("notices");
    this.list = byId("notice-list");
    this.rosters = byId("notice-rosters");
    this.dialog = byId("roster-dialog");
    this.warehouseId = null;
    this.asked = 0; // answers to an older question (another warehouse) are dropped
    this.list?.addEventListener("click", (event) => this.#onClick(event));
    this.rosters?.addEventListener("click", (event) => this.#onClick(event));
    this.dialog?.querySelector(".dialog-close")?.addEventListener("click", () => this.dialog.close());
    // An escalation's link to the roster, in the inbox or in a notification's dialog.
    document.addEventListener("click", (event) => {
      const link = event.target.closest("button[data-notice-roster]");
      if (link) void this.showRoster(Number(link.dataset.noticeRoster), link.dataset.title);
    });
  }

  setWarehouse(id) {
    this.warehouseId = id;
    this.shown = null;
    if (this.section) this.section.hidden = true;
    void this.refresh();
  }

  /** A notification arrived: a notice's means something to read (or a new version). */
  receive(note) {
    if (note?.message_type === NOTICE_TYPE) void this.refresh();
  }

  async refresh() {
    if (!this.section || this.warehouseId === null) return;
    const warehouseId = this.warehouseId;
    const asked = ++this.asked;
    let answer;
    try {
      answer = await get(this.url, { warehouse: warehouseId });
    } catch {
      return; // offline or a hiccup: what is shown stays until the next poll
    }
    if (asked !== this.asked || warehouseId !== this.warehouseId) return;
    this.#render(answer.results);
  }

  #render(notices) {
    const pinned = notices.filter(mustRead);
    const overseen = notices.filter((n) => n.roster_allowed && !n.is_closed && !mustRead(n));
    // Each poll asks again: what did not change is left alone (a thumb on its way to a button
    // must find the same button).
    const shown = JSON.stringify([pinned, overseen.map((n) => [n.id, n.title])]);
    if (shown === this.shown) return;
    this.shown = shown;
    replaceChildren(this.list, pinned.map((n) => this.#card(n)));
    replaceChildren(this.rosters, overseen.map((n) => h("li", { className: "notice-roster-row" },
      h("span", { className: "notice-roster-title" }, n.title),
      this.#rosterButton(n))));
    this.section.hidden = pinned.length === 0 && overseen.length === 0;
  }

  #card(notice) {
    return h("li", {
      className: `notice-card sev-${notice.severity}`,
      dataset: { notice: String(notice.id), version: String(notice.version) },
    },
    h("div", { className: "notice-head" },
      severityChip(notice),
      notice.version > 1
        ? h("span", { className: "notice-version" },
            format(gettext("Changed: version %(version)s"), { version: notice.version }))
        : null,
      notice.due_at
        ? h("span", { className: "notice-due" }, gettext("Read by"), " ", timeElement(notice.due_at))
        : null),
    h("h3", { className: "notice-title" }, notice.title),
    notice.body ? h("p", { className: "notice-body" }, notice.body) : null,
    h("div", { className: "notice-actions" },
      h("button", {
        type: "button",
        className: "btn btn-primary notice-ack",
        dataset: { action: "ack" },
      }, gettext("I have read this")),
      notice.roster_allowed ? this.#rosterButton(notice) : null));
  }

  #rosterButton(notice) {
    return h("button", {
      type: "button",
      className: "btn btn-small notice-roster-button",
      dataset: { action: "roster", notice: String(notice.id), title: notice.title },
    }, gettext("Who has read it"));
  }

  async #onClick(event) {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    if (button.dataset.action === "roster") {
      await this.showRoster(Number(button.dataset.notice), button.dataset.title);
      return;
    }
    const card = button.closest("[data-notice]");
    button.disabled = true;
    try {
      await post(`${this.url}${card.dataset.notice}/ack/`, { version: Number(card.dataset.version) });
      card.remove();
      this.shown = null;
      this.onRead();
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        this.toasts?.show(gettext("This notice was changed. Please read it again."));
      } else {
        this.toasts?.show(describeError(error));
        button.disabled = false;
        return;
      }
    }
    await this.refresh();
  }

  async showRoster(noticeId, title) {
    if (!this.dialog) return;
    let roster;
    try {
      roster = await get(`${this.url}${noticeId}/roster/`);
    } catch (error) {
      this.toasts?.show(describeError(error));
      return;
    }
    byId("roster-title").textContent = title;
    byId("roster-summary").textContent = format(
      gettext("Version %(version)s: %(acknowledged)s of %(total)s have read it, %(missing)s missing."),
      roster);
    byId("roster-csv").href = `${this.url}${noticeId}/roster/?format=csv`;
    replaceChildren(byId("roster-list"), roster.results.map((row) => h("li", {
      className: row.acked_at ? "roster-row is-read" : "roster-row is-missing",
    },
    h("span", { className: "roster-name" }, row.user.username),
    row.acked_at
      ? h("span", { className: "roster-when" }, timeElement(row.acked_at))
      : h("span", { className: "roster-when" }, gettext("Not read yet")),
    h("span", { className: row.on_shift ? "roster-shift is-on" : "roster-shift" },
      row.on_shift ? gettext("On shift") : gettext("Off shift")))));
    if (!this.dialog.open) this.dialog.showModal();
  }
}
