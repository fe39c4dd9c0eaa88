// The bell, its panel of unread summaries, the inbox of the chosen warehouse, and the
// dialog that shows one notification. Every piece of notification text is set as text.

import { CriticalAlarm } from "./alarm.js";
import { del, get, keptAt, post, describeError, idempotencyKey } from "./api.js";
import { byId, h, replaceChildren, setBadge } from "./dom.js";
import { absoluteTime, clockTime, format, relativeTime, timeElement } from "./i18n.js";
import {
  DesktopAlerts, actionButtons, currentUser, historyItems, isUnread, quietChip, severityChip,
  statusLine,
} from "./lifecycle.js";
import {
  HandoverDetails, acceptPath, handoverActions, handoverSummary, isHandover, shownTitle,
} from "./handover.js";
import { isNotice, noticeActions, noticeSummary } from "./notices.js";
import { ActionQueue } from "./queue.js";
import { ActionRunner, alertActionButtons } from "./alert-actions.js";

// The list's filters (SPEC 12). "all" is everything not resolved; resolved ones have their own.
// What I snoozed is out of sight until it wakes, except under its own filter (SPEC 13).
const FILTERS = {
  all: (note) => note.status !== "resolved" && !note.snoozed_until,
  open: (note) => (note.status ?? "open") === "open" && !note.snoozed_until,
  mine: (note, me) => note.status === "claimed" && note.claimed_by?.id === me.id
    && !note.snoozed_until,
  critical: (note) => note.severity === "critical" && note.status !== "resolved"
    && !note.snoozed_until,
  snoozed: (note) => Boolean(note.snoozed_until),
  resolved: (note) => note.status === "resolved",
};
const HOUR_MS = 3_600_000;
// The filters whose list puts open critical alerts first; the others are by time alone.
const CRITICAL_FIRST = new Set(["all", "open"]);

/** Open and critical: what someone must go to now. */
function isOpenCritical(note) {
  return note.severity === "critical" && (note.status ?? "open") === "open";
}

/**
 * The one order of the page: open critical alerts first, then the newest first. The list
 * (in All and Open), the bell's panel and what the stream inserts all follow it. The API keeps
 * its cursor order (clients page by it); only the page sorts.
 */
function alertOrder(a, b) {
  return Number(isOpenCritical(b)) - Number(isOpenCritical(a))
    || b.created_at.localeCompare(a.created_at);
}

function newestFirst(a, b) {
  return b.created_at.localeCompare(a.created_at);
}

/** A notification as it will be once the actions still waiting for the network are sent. */
function withQueued(note, queued, me) {
  let view = note;
  for (const item of queued) {
    if (item.action === "claim") view = { ...view, status: "claimed", claimed_by: me, read: true };
    if (item.action === "release") view = { ...view, status: "open", claimed_by: null };
    if (item.action === "resolve") view = { ...view, status: "resolved", resolved_by: me };
  }
  return queued.length ? { ...view, queued: queued.map((item) => item.action) } : view;
}

// The inbox shows at most this many (newest); the API pages at most 200 at a time.
const INBOX_SIZE = 200;
const INBOX_MAX_PAGES = 5;

/** Published and never changed since (a change of status or a re-raise shows in these). */
function isFreshlyPublished(note) {
  return (note.status ?? "open") === "open" && (note.occurrences ?? 1) === 1
    && !note.escalated_at && !note.claimed_at && !note.resolved_at;
}
// The unread endpoint's `latest` holds this many.
const SUMMARY_SIZE = 5;

/** The buttons of an alert (Claim, Release, Resolve, ...); a notice's own (notices.js). */
function ownActions(note, me, options) {
  return isNotice(note) ? noticeActions(note) : actionButtons(note, me, options);
}

export class NotificationCenter {
  constructor({ api, memory, warehouses, types = {}, toasts, onCountChange }) {
    this.url = api.notifications;
    this.memory = memory;
    this.warehouses = warehouses;
    this.types = types; // message type code -> its name in the page's language
    this.toasts = toasts;
    this.onCountChange = onCountChange;
    this.warehouseId = null;
    this.unreadCount = null; // null: not known yet for this warehouse
    this.quietCount = 0; // how many of the unread came quietly (the unread summary's `quiet`)
    this.summaries = [];
    this.inbox = [];
    this.stale = true; // summaries and inbox need fetching
    this.loaded = false; // the inbox of this warehouse has been fetched (or kept) at least once
    // "<id>@<cursor>" of what was announced: a poll that was in flight when the stream
    // delivered the same news must not announce it a second time.
    this.announced = new Set();
    // Counts stream events: an answer computed before the latest event must not undo what
    // that event showed (a colleague's claim lowering the badge, say).
    this.events = 0;

    this.bell = byId("bell-button");
    this.badge = byId("unread-count");
    this.panel = byId("notification-panel");
    this.unreadList = byId("unread-list");
    this.unreadEmpty = byId("unread-empty");
    this.unreadMore = byId("unread-more");
    this.markAllButton = byId("mark-all-read");
    this.inboxList = byId("inbox-list");
    this.inboxEmpty = byId("inbox-empty");
    this.dialog = byId("notification-dialog");
    this.me = currentUser();
    this.dialogId = null; // the notification the dialog shows
    this.desktop = new DesktopAlerts(byId("desktop-alerts"));
    this.handoverDetails = new HandoverDetails(byId("dialog-handover"), {
      openAlert: (id) => this.#openFromHandover(id),
    });
    this.alarm = new CriticalAlarm(byId("alert-sound"));
    this.filter = FILTERS[memory.filter] ? memory.filter : "all";
    this.expanded = new Set(); // ids whose body is shown in full
    this.queue = new ActionQueue({
      userId: this.me.id,
      send: (item) => post(`${this.url}${item.id}/${item.action}/`, { warehouse: item.warehouse },
                           { "Idempotency-Key": item.key }),
      onSettled: (item, note, error) => this.#settled(item, note, error),
      onChange: () => this.#renderQueue(),
    });
    // The alert's own actions (SPEC 14): pressed once, after a scan when they ask for one;
    // their outcomes on the cards and in the dialog.
    this.runner = new ActionRunner({
      url: this.url,
      warehouse: () => this.warehouseId,
      find: (id) => this.#find(id),
      toasts,
      me: this.me,
      onDone: () => {
        this.stale = true;
        this.#reload(this.warehouseId).catch(() => {}); // the poll loop shows trouble
      },
      onChange: () => {
        this.#renderInbox();
        this.#refreshDialog();
      },
    });

    this.#wire();
  }

  #wire() {
    this.bell?.addEventListener("click", () => this.togglePanel());
    this.markAllButton?.addEventListener("click", () => this.markAllRead());
    // One listener per list: items carry their id in data-id, never a handler with data in it.
    for (const list of [this.unreadList, this.inboxList, byId("dialog-actions")]) {
      list?.addEventListener("click", (event) => {
        if (event.target.closest("[data-expand]")) return;
        const retry = event.target.closest("[data-retry]");
        if (retry) {
          this.runner.start(retry.dataset.note, retry.dataset.retry); // a new press
          return;
        }
        const action = event.target.closest("[data-action]");
        if (action) {
          this.act(action.dataset.action, action.dataset.id);
          return;
        }
        const item = event.target.closest("[data-id]");
        if (item) this.open(item.dataset.id);
      });
    }
    byId("dialog-alert-actions")?.addEventListener("click", (event) => {
      const retry = event.target.closest("[data-retry]");
      if (retry) {
        this.runner.start(retry.dataset.note, retry.dataset.retry);
        return;
      }
      const button = event.target.closest("[data-alert-action]");
      if (button) this.runner.start(button.dataset.id, button.dataset.alertAction);
    });
    byId("dialog-history-toggle")?.addEventListener("click", () => this.toggleHistory());
    this.inboxList?.addEventListener("click", (event) => {
      const toggle = event.target.closest("[data-expand]");
      if (toggle) this.#toggleBody(toggle.dataset.expand);
    });
    document.querySelector(".filters")?.addEventListener("click", (event) => {
      const button = event.target.closest("[data-filter]");
      if (button) this.setFilter(button.dataset.filter);
    });
    this.dialog?.querySelector(".dialog-close")?.addEventListener("click", () => this.dialog.close());
    this.dialog?.addEventListener("click", (event) => {
      if (event.target === this.dialog) this.dialog.close(); // a click on the backdrop
    });
    document.addEventListener("click", (event) => {
      if (!this.panel.hidden && !event.target.closest(".bell") && !this.dialog.open) {
        this.togglePanel(false);
      }
    });
  }

  togglePanel(open = this.panel.hidden) {
    this.panel.hidden = !open;
    this.bell.setAttribute("aria-expanded", String(open));
  }

  /** Switch to another warehouse: forget what was shown and poll it from its own cursor. */
  setWarehouse(id) {
    this.warehouseId = id;
    this.unreadCount = null;
    this.quietCount = 0;
    this.summaries = [];
    this.inbox = [];
    this.stale = true;
    this.loaded = false;
    const warehouse = this.warehouses.find((w) => w.id === id);
    byId("inbox-warehouse-code").textContent = warehouse?.code ?? "";
    byId("inbox-title").textContent = warehouse?.name ?? "";
    this.expanded.clear();
    this.runner.reset();
    // News of the warehouse left behind is not news here.
    this.toasts.clear({ except: id });
    this.#renderCount();
    this.#renderSummaries();
    this.#renderFilters();
    this.#renderInbox();
    this.#renderQueue();
  }

  /**
   * What counts as unread for me changed without news (my mute began or ended): the panel and
   * the list are drawn again; the next poll brings the server's count.
   */
  redraw() {
    this.summaries = this.summaries.filter(isUnread);
    this.#renderSummaries();
    this.#renderInbox();
  }

  /** Show one part of the list: all (not resolved), open, mine, critical, or resolved. */
  setFilter(name) {
    if (!FILTERS[name]) return;
    this.filter = name;
    this.memory.filter = name;
    this.#renderFilters();
    this.#renderInbox();
    if (name === "snoozed") void this.#loadSnoozed(this.warehouseId);
  }

  /**
   * My snoozed ones, however old: the inbox holds the newest 200 only. Fetched when the
   * Snoozed filter is shown, merged into the inbox by id.
   */
  async #loadSnoozed(warehouseId) {
    if (warehouseId === null) return;
    try {
      const answer = await get(`${this.url}snoozed/`, { warehouse: warehouseId });
      if (warehouseId !== this.warehouseId) return;
      const fresh = new Map(answer.results.map((n) => [n.id, n]));
      // Ones no longer snoozed (woken elsewhere) lose the flag; the next reload fixes the rest.
      this.inbox = this.inbox.map((n) => fresh.get(n.id)
        ?? (n.snoozed_until ? { ...n, snoozed_until: null } : n));
      const known = new Set(this.inbox.map((n) => n.id));
      this.inbox = this.inbox.concat(answer.results.filter((n) => !known.has(n.id)));
      this.#renderInbox();
    } catch {
      // The poll loop shows the connection problem.
    }
  }

  #renderFilters() {
    document.querySelectorAll(".filters [data-filter]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.filter === this.filter));
    });
  }

  #toggleBody(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.#renderInbox();
  }

  /** The name of a message type in the page's language (its code when unknown). */
  typeName(code) {
    return this.types[code] ?? code;
  }

  #view(note) {
    return withQueued(note, this.queue.of(note.id), this.me);
  }

  /** One poll round: new notifications since the cursor, and what changed because of them. */
  async poll() {
    const warehouseId = this.warehouseId;
    if (warehouseId === null) return;
    const cursor = this.memory.cursor(warehouseId);
    const events = this.events;
    let page;
    try {
      page = await this.#fetchSince(warehouseId, cursor);
    } catch (error) {
      // No network and nothing shown yet (a reload in the freezer): show what the service
      // worker kept of this warehouse. The round still fails, so the page keeps trying.
      if (error?.status === 0 && !this.loaded && warehouseId === this.warehouseId) {
        await this.#reload(warehouseId).catch(() => {});
      }
      throw error;
    }
    if (warehouseId !== this.warehouseId) return; // switched while the request ran
    const overtaken = this.events !== events;
    // The stream may have moved the cursor past this answer while the request ran.
    const latest = this.memory.cursor(warehouseId);
    if (latest === null || page.next_since > latest) {
      this.memory.setCursor(warehouseId, page.next_since);
    }
    // Without a stored cursor the answer is the backlog of the last days, not news.
    if (cursor !== null && page.results.length > 0) this.#announce(page.results);
    if (overtaken) {
      // The stream moved on while this answer was on its way: its figures may be older than
      // what the page shows now. The next poll reconciles.
      this.stale = true;
    } else if (this.stale || page.results.length > 0 || page.unread_count !== this.unreadCount) {
      await this.#reload(warehouseId);
    } else {
      this.#setCount(page.unread_count);
    }
    // The time stays on one line ("12:48:58 PM") where the status row wraps the text.
    const time = clockTime(new Date()).replace(/\s/g, "\u00a0");
    byId("last-updated").textContent = format(gettext("Updated %(time)s"), { time });
  }

  /**
   * Every page after `since` until the answer says it is caught up (`has_more` false; a short
   * or empty page alone never means that): the results together, with the last page's figures.
   */
  async #fetchSince(warehouseId, since) {
    let results = [];
    let page;
    let from = since ?? undefined;
    for (let pageNo = 0; pageNo < INBOX_MAX_PAGES; pageNo += 1) {
      page = await get(this.url, { warehouse: warehouseId, since: from, limit: 200 });
      results = results.concat(page.results);
      if (!page.has_more || page.next_since === from) break;
      from = page.next_since;
    }
    return { ...page, results };
  }

  /**
   * The stream could not replay from the stored cursor (it is older than anything it can
   * replay): start this warehouse from scratch, as a first visit does.
   */
  reset(warehouseId) {
    if (warehouseId !== this.warehouseId) return;
    this.memory.forgetCursor(warehouseId);
    this.stale = true;
  }

  /** A notification pushed by the event stream: a new one, or a new state of one shown. */
  receive(note) {
    if (note.warehouse !== this.warehouseId) return;
    this.events += 1;
    // Events come in cursor order and the stream replays from the stored cursor: advance it,
    // so the next reconciling poll neither misses nor repeats them.
    const cursor = this.memory.cursor(note.warehouse);
    if (cursor === null || note.cursor > cursor) this.memory.setCursor(note.warehouse, note.cursor);
    const known = this.#find(note.id);
    const replace = (list) => list.map((n) => (n.id === note.id ? note : n));
    this.inbox = known ? replace(this.inbox) : [note, ...this.inbox].slice(0, INBOX_SIZE);
    this.summaries = replace(this.summaries).filter(isUnread);
    if (!known && isUnread(note)) {
      this.summaries = [note, ...this.summaries].slice(0, SUMMARY_SIZE);
      this.#announce([note]);
    }
    this.#countChange(known, note);
    this.#renderSummaries();
    this.#renderInbox();
  }

  /**
   * A reminder of an alert nobody has claimed yet (`event: reminder`, SPEC 14): its copy is
   * brought up to date, the status line says so, and a critical one sounds again (when the
   * user enabled the sound).
   */
  remind(note) {
    if (note.warehouse !== this.warehouseId) return;
    const known = this.#find(note.id);
    // It carries the alert's current state, not a new cursor: the page's cursor stays.
    if (known) this.#replace({ ...note, cursor: known.cursor });
    this.toasts.show(format(gettext("Still not claimed: %(title)s"), { title: note.title }),
                     { tone: "warning", warehouse: note.warehouse, action: () => this.open(note.id) });
    // A critical one sounds again, when the device's setting is on (never a quiet one).
    this.alarm.remind(note);
  }

  /**
   * My claim of it was let go by the system (`event: claim_expired`, SPEC 17): held too long
   * with no progress. Its copy is brought up to date (open again) and a toast says so.
   */
  claimExpired(note) {
    if (note.warehouse !== this.warehouseId) return;
    const known = this.#find(note.id);
    if (known) this.#replace({ ...note, cursor: Math.max(known.cursor, note.cursor) });
    this.toasts.show(format(gettext("Your claim expired: %(title)s"), { title: note.title }),
                     { tone: "warning", warehouse: note.warehouse, action: () => this.open(note.id) });
  }

  /**
   * The badge, the "N unread" line and the panel follow status as well as read: a colleague's
   * claim or a resolve takes it out of my unread ones, a re-raise or a release puts it back.
   */
  #countChange(known, note) {
    if (this.unreadCount === null) return;
    if (!known && !isFreshlyPublished(note)) {
      // A change of one this page has not loaded: whether it counted before is not known
      // here; the unread endpoint says.
      this.#reloadCount(note.warehouse);
      return;
    }
    const delta = (isUnread(note) ? 1 : 0) - (known && isUnread(known) ? 1 : 0);
    const quiet = (isUnread(note) && note.quiet ? 1 : 0)
      - (known && isUnread(known) && known.quiet ? 1 : 0);
    if (quiet !== 0) this.quietCount = Math.max(0, this.quietCount + quiet);
    if (delta !== 0) this.#setCount(Math.max(0, this.unreadCount + delta));
    else if (quiet !== 0) this.#renderCount();
  }

  async #reloadCount(warehouseId) {
    const events = this.events;
    try {
      const unread = await get(`${this.url}unread/`, { warehouse: warehouseId },
                               { keep: this.me.id });
      if (warehouseId !== this.warehouseId) return;
      if (this.events !== events) {
        this.stale = true; // more events came meanwhile: the next poll reconciles
        return;
      }
      this.summaries = unread.latest;
      this.quietCount = unread.quiet ?? 0;
      this.#setCount(unread.unread_count);
      this.#renderCount();
      this.#renderSummaries();
    } catch {
      // The poll loop shows the connection problem and reconciles.
    }
  }

  async #reload(warehouseId) {
    const events = this.events;
    const [unread, { items: inbox, fromCopy }] = await Promise.all([
      get(`${this.url}unread/`, { warehouse: warehouseId }, { keep: this.me.id }),
      this.#fetchInbox(warehouseId),
    ]);
    if (warehouseId !== this.warehouseId) return;
    if (this.events !== events) {
      this.stale = true; // the stream moved on meanwhile: the next poll reloads
      return;
    }
    this.summaries = unread.latest;
    this.quietCount = unread.quiet ?? 0;
    this.inbox = inbox;
    this.loaded = true;
    this.runner.follow(inbox); // what became of my presses (SPEC 14, outcomes)
    this.#refreshDialog();
    // What the service worker kept may be older than the cursor: the first poll that gets
    // through fetches it all again.
    this.stale = fromCopy || keptAt(unread) !== null;
    this.#setCount(unread.unread_count);
    this.#renderCount();
    this.#renderSummaries();
    this.#renderInbox();
    if (this.filter === "snoozed") await this.#loadSnoozed(warehouseId);
  }

  /** The inbox, newest first; fromCopy: (some of) it is what the service worker kept. */
  async #fetchInbox(warehouseId) {
    // Results come oldest first, a page at a time: walk forward and keep the newest.
    let items = [];
    let since;
    let fromCopy = false;
    for (let pageNo = 0; pageNo < INBOX_MAX_PAGES; pageNo += 1) {
      const page = await get(this.url, { warehouse: warehouseId, include_read: "true",
                                         limit: INBOX_SIZE, since }, { keep: this.me.id });
      fromCopy ||= keptAt(page) !== null;
      items = items.concat(page.results);
      // Keep the latest state of each: a changed one comes again with a higher cursor.
      items = [...new Map(items.map((n) => [n.id, n])).values()].slice(-INBOX_SIZE);
      if (!page.has_more || page.next_since === since) break;
      since = page.next_since;
    }
    // A change of status moves a notification to the end of the cursor order; the inbox
    // keeps them newest first by when they were published (the filters sort what they show).
    return { items: items.sort(newestFirst), fromCopy };
  }

  #setCount(count) {
    if (count === this.unreadCount) return;
    this.unreadCount = count;
    this.#renderCount();
  }

  #renderCount() {
    const count = this.unreadCount ?? 0;
    setBadge(this.badge, count);
    this.bell?.setAttribute("aria-label", format(
      ngettext("Notifications: %(count)s unread", "Notifications: %(count)s unread", count),
      { count }));
    if (this.markAllButton) this.markAllButton.disabled = count === 0;
    const summary = byId("inbox-summary");
    if (summary) {
      summary.textContent = this.unreadCount === null ? gettext("Loading…") : count === 0
        ? gettext("No unread notifications")
        : format(ngettext("%(count)s unread notification", "%(count)s unread notifications",
                          count), { count });
    }
    // How many of the unread came quietly (the unread summary's `quiet`, SPEC 17).
    const quiet = byId("unread-quiet");
    if (quiet) {
      const some = count > 0 && this.quietCount > 0;
      quiet.hidden = !some;
      quiet.textContent = some
        ? format(ngettext("%(count)s came quietly", "%(count)s came quietly", this.quietCount),
                 { count: this.quietCount })
        : "";
    }
    this.onCountChange(count);
  }

  /**
   * The bell's panel: my unread ones in the page's order, at most SUMMARY_SIZE. The unread
   * endpoint's `latest` are the newest; an older unread critical the inbox holds goes above.
   */
  #panelNotes() {
    const unread = new Map();
    for (const note of [...this.summaries, ...this.inbox]) {
      if (!unread.has(note.id) && isUnread(note) && !note.snoozed_until) unread.set(note.id, note);
    }
    return [...unread.values()].sort(alertOrder).slice(0, SUMMARY_SIZE);
  }

  #renderSummaries() {
    const items = this.#panelNotes().map((note) => h("li", { className: `sev-${note.severity}` },
      h("button", { type: "button", className: "summary", dataset: { id: note.id } },
        h("span", { className: "summary-title" }, shownTitle(note)),
        h("span", { className: "summary-meta" },
          severityChip(note),
          quietChip(note),
          h("span", { className: "type-chip", title: note.message_type },
            this.typeName(note.message_type)),
          timeElement(note.created_at, "summary-time")))));
    replaceChildren(this.unreadList, items);
    this.unreadEmpty.hidden = items.length > 0;
    const more = (this.unreadCount ?? 0) - items.length;
    this.unreadMore.hidden = more <= 0;
    this.unreadMore.textContent = more > 0
      ? format(ngettext("and %(count)s more in the inbox", "and %(count)s more in the inbox",
                        more), { count: more })
      : "";
  }

  #renderInbox() {
    if (!this.inboxList) return;
    const keep = FILTERS[this.filter];
    const shown = this.inbox.map((note) => this.#view(note)).filter((note) => keep(note, this.me))
      .sort(CRITICAL_FIRST.has(this.filter) ? alertOrder : newestFirst);
    const items = shown.map((note) => this.#card(note));
    replaceChildren(this.inboxList, items);
    // "Nothing in the last three days" only once the inbox is known (not while it loads, nor
    // offline with nothing kept).
    this.inboxEmpty.hidden = !this.loaded || this.inbox.length > 0;
    const filterEmpty = byId("filter-empty");
    if (filterEmpty) {
      filterEmpty.hidden = !this.loaded || this.inbox.length === 0 || items.length > 0;
    }
  }

  /** One compact card: a row that opens it, then its body (tap to expand) and its buttons. */
  #card(note) {
    const expanded = this.expanded.has(note.id);
    const handover = isHandover(note);
    const text = handover ? handoverSummary(note)
      : isNotice(note) ? noticeSummary(note) : note.body;
    const body = text
      ? h("button", {
        type: "button",
        className: expanded ? "inbox-item-body is-expanded" : "inbox-item-body",
        "aria-expanded": String(expanded),
        dataset: { expand: note.id },
      }, text)
      : h("span", { className: "inbox-item-body is-empty" });
    const queued = note.queued
      ? h("span", { className: "queued-flag" }, gettext("Waiting for the network"))
      : null;
    return h("li", {
      className: `inbox-entry sev-${note.severity} status-${note.status}`
        + (handover ? " handover-card" : ""),
      dataset: { note: note.id },
    },
      h("button", {
        type: "button",
        className: isUnread(note) ? "inbox-item" : "inbox-item is-read",
        dataset: { id: note.id },
      },
      h("span", { className: "unread-dot", "aria-hidden": "true" }),
      h("span", { className: "inbox-main" },
        h("span", { className: "inbox-item-title" }, shownTitle(note)),
        h("span", { className: "inbox-meta-line" },
          severityChip(note),
          quietChip(note),
          h("span", { className: "type-chip", title: note.message_type },
            this.typeName(note.message_type)),
          statusLine(note),
          queued)),
      timeElement(note.created_at, "inbox-time"),
      isUnread(note) ? h("span", { className: "visually-hidden" }, gettext("unread")) : null),
      h("div", { className: "item-foot" },
        body,
        h("div", { className: "item-actions" },
          handover ? handoverActions(note) : ownActions(note, this.me))),
      this.#outcomes(note));
  }

  /** What became of the alert's actions (SPEC 14): sent, done, or what failed and Try again. */
  #outcomes(note) {
    const lines = this.runner.outcomeLines(note);
    return lines.length ? h("div", { className: "run-lines" }, lines) : null;
  }

  #find(id) {
    return this.summaries.find((n) => n.id === id) ?? this.inbox.find((n) => n.id === id);
  }

  /**
   * Claim, release or resolve one notification, then show its new state everywhere. Without a
   * network the action waits in the queue (same Idempotency-Key) and is sent when it is back.
   */
  async act(action, id) {
    if (action === "accept") {
      await this.#accept(id);
      return;
    }
    if (action.startsWith("snooze") || action === "wake") {
      await this.#snooze(action, id);
      return;
    }
    const item = { action, id, warehouse: this.warehouseId, key: idempotencyKey() };
    if (navigator.onLine === false || this.queue.items.length > 0) {
      // Offline, or earlier actions still wait: this one goes after them, in order.
      this.#enqueue(item);
      return;
    }
    try {
      const note = await post(`${this.url}${id}/${action}/`, { warehouse: item.warehouse },
                              { "Idempotency-Key": item.key });
      this.#replace(note);
    } catch (error) {
      if (error?.status === 0) {
        // No answer: it may not have arrived. Sent again later with the same key.
        this.#enqueue(item);
        return;
      }
      // 409 (someone else has it), 403 (not mine to release), 404 (gone): say so and refresh.
      this.toasts.show(describeError(error), { tone: "warning", warehouse: item.warehouse });
    }
    this.stale = true;
    try {
      await this.#reload(this.warehouseId);
    } catch {
      // The poll loop shows the connection problem and retries.
    }
  }

  /** Accept a shift handover: 200 the first time, 409 (said in a toast) once someone has. */
  async #accept(id) {
    const note = this.#find(id);
    if (!note || !isHandover(note)) return;
    try {
      await post(acceptPath(note), {});
      this.toasts.show(gettext("Handover accepted"), { warehouse: this.warehouseId });
    } catch (error) {
      this.toasts.show(describeError(error), { tone: "warning", warehouse: this.warehouseId });
    }
    this.stale = true;
    try {
      await this.#reload(this.warehouseId);
    } catch {
      // The poll loop shows the connection problem and retries.
    }
  }

  /** Snooze for an hour or until my next shift, or wake it now (mine alone; needs the network). */
  async #snooze(action, id) {
    const warehouse = this.warehouseId;
    try {
      const url = `${this.url}${id}/snooze/`;
      const note = action === "wake"
        ? await del(url, { warehouse })
        : await post(url, {
          warehouse,
          until: action === "snooze-shift"
            ? "next_shift" : new Date(Date.now() + HOUR_MS).toISOString(),
        });
      this.#replace(note);
      const text = note.snoozed_until
        ? format(gettext("Snoozed until %(time)s"),
                 { time: absoluteTime(new Date(note.snoozed_until)) })
        : gettext("Back in your unread notifications");
      this.toasts.show(text, { warehouse });
    } catch (error) {
      // 400 no shift of mine here, 404 gone, 409 resolved: say so and refresh.
      this.toasts.show(describeError(error), { tone: "warning", warehouse });
    }
    this.stale = true;
    try {
      await this.#reload(this.warehouseId);
    } catch {
      // The poll loop shows the connection problem and retries.
    }
  }

  #enqueue(item) {
    this.queue.add(item);
    this.#renderInbox();
    this.#refreshDialog();
  }

  /** Send the actions that waited for the network (before each poll, and when back online). */
  async flushQueue() {
    if (!this.queue.items.length) return;
    await this.queue.flush();
    this.stale = true;
  }

  /** What the user learns when a queued action finally got its answer. */
  #settled(item, note, error) {
    const here = item.warehouse === this.warehouseId;
    if (note) {
      if (here) this.#replace(note);
      return;
    }
    const holder = error?.payload?.claimed_by?.username;
    let text = describeError(error);
    let tone = "warning";
    if (item.action === "release" && (error?.status === 403 || error?.status === 409)) {
      // The release did what it was for: it is not mine any more. Someone took it, or
      // resolved it, before it arrived. (A send whose answer was lost is answered again with
      // that answer: same Idempotency-Key.)
      tone = "info";
      text = holder
        ? format(gettext("Released. %(name)s has claimed it since."), { name: holder })
        : gettext("Released. It has been resolved since.");
    }
    this.toasts.show(text, { tone, warehouse: item.warehouse });
    if (here) this.#renderInbox();
  }

  #renderQueue() {
    const waiting = this.queue.items.length;
    const line = byId("queued-actions");
    if (line) {
      line.hidden = waiting === 0;
      line.textContent = format(ngettext("%(count)s action waits for the network",
                                         "%(count)s actions wait for the network", waiting),
                                { count: waiting });
    }
    this.#renderInbox();
    this.#refreshDialog();
  }

  #replace(note) {
    const swap = (list) => list.map((n) => (n.id === note.id ? note : n));
    this.inbox = swap(this.inbox);
    this.summaries = swap(this.summaries).filter(isUnread);
    this.#renderSummaries();
    this.#renderInbox();
    this.#refreshDialog();
  }

  async toggleHistory() {
    const list = byId("dialog-history");
    if (!list.hidden) {
      list.hidden = true;
      byId("dialog-history-toggle").setAttribute("aria-expanded", "false");
      return;
    }
    await this.#loadHistory();
  }

  async #loadHistory() {
    const list = byId("dialog-history");
    const toggle = byId("dialog-history-toggle");
    const id = this.dialogId;
    try {
      const history = await get(`${this.url}${id}/history/`, { warehouse: this.warehouseId });
      if (id !== this.dialogId) return;
      replaceChildren(list, historyItems(history.results));
      list.hidden = false;
      toggle.setAttribute("aria-expanded", "true");
    } catch (error) {
      this.toasts.show(describeError(error), { tone: "warning" });
    }
  }

  /** Show one notification, and mark it read. */
  async open(id) {
    const note = this.#find(id);
    if (!note) return;
    this.#showDialog(note);
    if (note.read) return;
    try {
      const answer = await post(`${this.url}read/`, { warehouse: this.warehouseId, ids: [id] });
      this.#markLocally([id]);
      this.#setCount(answer.unread_count);
      this.stale = true;
      await this.#reload(this.warehouseId);
    } catch (error) {
      this.toasts.show(describeError(error), { tone: "warning" });
    }
  }

  /** A link of a handover's dialog: that alert, when this page has it. */
  #openFromHandover(id) {
    if (this.#find(id)) {
      void this.open(id);
      return;
    }
    this.toasts.show(gettext("That alert is not in this list any more."),
                     { tone: "warning", warehouse: this.warehouseId });
  }

  async markAllRead() {
    this.markAllButton.disabled = true;
    try {
      const answer = await post(`${this.url}read/`, { warehouse: this.warehouseId, all: true });
      this.#markLocally(this.inbox.map((n) => n.id));
      this.summaries = [];
      this.#setCount(answer.unread_count);
      this.#renderSummaries();
      this.#renderInbox();
      this.stale = true; // fetch again on the next round, in case something arrived meanwhile
    } catch (error) {
      this.toasts.show(describeError(error), { tone: "warning" });
      this.markAllButton.disabled = (this.unreadCount ?? 0) === 0;
    }
  }

  #markLocally(ids) {
    const wanted = new Set(ids);
    for (const note of [...this.summaries, ...this.inbox]) {
      if (wanted.has(note.id)) note.read = true;
    }
    this.summaries = this.summaries.filter((n) => !n.read);
    this.#renderSummaries();
    this.#renderInbox();
  }

  #refreshDialog() {
    if (!this.dialog?.open || this.dialogId === null) return;
    const note = this.#find(this.dialogId);
    if (note) this.#renderLifecycle(this.#view(note));
  }

  #renderLifecycle(note) {
    replaceChildren(byId("dialog-severity"), [severityChip(note)]);
    replaceChildren(byId("dialog-status"), [statusLine(note)]);
    replaceChildren(byId("dialog-actions"),
      isHandover(note) ? handoverActions(note) : ownActions(note, this.me, { snooze: true }));
    const own = [...alertActionButtons(note), this.#outcomes(note)].filter(Boolean);
    replaceChildren(byId("dialog-alert-actions"), own);
    byId("dialog-alert-actions").hidden = own.length === 0;
    // An open history view follows the changes.
    if (!byId("dialog-history").hidden) void this.#loadHistory();
  }

  #showDialog(note) {
    const created = new Date(note.created_at);
    if (this.dialogId !== note.id || !this.dialog.open) {
      byId("dialog-history").hidden = true;
      byId("dialog-history-toggle").setAttribute("aria-expanded", "false");
    }
    this.dialogId = note.id;
    this.#renderLifecycle(this.#view(note));
    byId("dialog-type").textContent = this.typeName(note.message_type);
    byId("dialog-title").textContent = shownTitle(note);
    const time = byId("dialog-time");
    time.dateTime = note.created_at;
    time.textContent = `${absoluteTime(created)} · ${relativeTime(created)}`;
    // A handover tells its content in sentences with links (handover.js), never as raw data.
    const handover = isHandover(note);
    byId("dialog-body").textContent = handover ? ""
      : isNotice(note) ? noticeSummary(note) : note.body;
    byId("dialog-body").hidden = handover;
    void this.handoverDetails.show(note);
    // A notice's data (its id, version, who is missing) is told in sentences, never as raw data.
    const entries = handover || isNotice(note) ? [] : Object.entries(note.data ?? {});
    replaceChildren(byId("dialog-data"), entries.flatMap(([key, value]) => [
      h("dt", {}, key),
      h("dd", {}, typeof value === "string" ? value : JSON.stringify(value)),
    ]));
    byId("dialog-data").hidden = entries.length === 0;
    byId("dialog-expires").textContent = note.expires_at
      ? format(gettext("Expires %(time)s"), { time: absoluteTime(new Date(note.expires_at)) })
      : "";
    if (!this.dialog.open) this.dialog.showModal();
  }

  #announce(changed) {
    // Changes of status come back too; only what needs someone now is news.
    const notes = changed.filter((n) => isUnread(n) && !this.announced.has(`${n.id}@${n.cursor}`));
    if (notes.length === 0) return;
    for (const n of notes) this.announced.add(`${n.id}@${n.cursor}`);
    if (this.announced.size > 1000) this.announced = new Set([...this.announced].slice(-500));
    // One that came quietly (beyond the user's noise budget, SPEC 17) is listed and told in a
    // toast, but has no desktop alert, sound, vibration or ringing bell.
    const loud = notes.filter((n) => !n.quiet);
    if (loud.length > 0) {
      this.desktop.show(loud, (id) => this.open(id));
      this.alarm.ring(loud);
      this.bell?.classList.remove("ring");
      void this.bell?.offsetWidth; // restart the animation
      this.bell?.classList.add("ring");
    }
    const newest = notes[notes.length - 1];
    const text = notes.length === 1
      ? format(gettext("New: %(title)s"), { title: shownTitle(newest) })
      : format(ngettext("%(count)s new notification", "%(count)s new notifications",
                        notes.length), { count: notes.length });
    this.toasts.show(text, { action: () => this.open(newest.id), warehouse: this.warehouseId });
  }
}
