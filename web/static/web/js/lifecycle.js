// The alert lifecycle on the page: severity, who is on it, Claim / Release / Resolve, history,
// and desktop alerts for critical ones. Everything typed by people goes in as text.

import { byId, h } from "./dom.js";
import { absoluteTime, clockTime, format } from "./i18n.js";

/** The signed-in user, from the page's configuration blob. */
export function currentUser() {
  return JSON.parse(byId("wms-config").textContent).user;
}

const LEVELS = { info: 0, warning: 1, critical: 2 };
let mute = null; // my mute of the shown warehouse (mute.js): {until: Date, below}, or null

/** My mute of the shown warehouse changed (mute.js): null when there is none. */
export function setMute(value) {
  mute = value;
}

/** Under my active mute's floor (SPEC 17): not unread for me, no sound. Critical never is. */
export function isMuted(note) {
  return mute !== null && mute.until.getTime() > Date.now()
    && (LEVELS[note.severity] ?? 0) < LEVELS[mute.below];
}

/**
 * Unread means: not read by me, nobody has taken it or finished it, no planned silence holds
 * it back and my mute does not cover it (the server counts the same way, SPEC 17).
 */
export function isUnread(note) {
  return !note.read && (note.status ?? "open") === "open" && !note.silenced && !isMuted(note);
}

export function severityWord(severity) {
  if (severity === "critical") return gettext("Critical");
  if (severity === "warning") return gettext("Warning");
  return gettext("Info");
}

export function severityChip(note) {
  const severity = note.severity ?? "info";
  return h("span", { className: `severity-chip sev-${severity}` }, severityWord(severity));
}

/**
 * "Came quietly": the alert came beyond the user's noise budget (SPEC 17): listed and unread,
 * but it did not sound, vibrate or push. Nothing for the others.
 */
export function quietChip(note) {
  if (!note.quiet) return null;
  return h("span", { className: "quiet-chip", title: gettext(
    "More alerts than your hourly budget: this one came without sound or push") },
  gettext("Came quietly"));
}

/** "Claimed by bob", "Resolved by alice", "Resolved automatically", or "" while open. */
export function statusText(note) {
  if (note.status === "claimed" && note.claimed_by) {
    return format(gettext("Claimed by %(name)s"), { name: note.claimed_by.username });
  }
  if (note.status === "resolved") {
    return note.resolved_by
      ? format(gettext("Resolved by %(name)s"), { name: note.resolved_by.username })
      : gettext("Resolved automatically");
  }
  return "";
}

/** The status line of an item: who is on it, escalation, and how often it was raised. */
export function statusLine(note) {
  const parts = [];
  const status = statusText(note);
  if (status) parts.push(h("span", { className: `status-text status-${note.status}` }, status));
  if (note.silenced) {
    // Held back by a planned silence: listed, but unread for nobody and never rung (SPEC 17).
    parts.push(h("span", { className: "silenced-flag" }, pgettext("alert", "Silenced")));
  }
  if (note.escalated_at) {
    parts.push(h("span", { className: "escalated-flag" }, gettext("Escalated")));
  }
  if ((note.occurrences ?? 1) > 1) {
    parts.push(h("span", { className: "occurrences" },
      format(gettext("Raised %(count)s times"), { count: note.occurrences })));
  }
  if (note.snoozed_until) {
    const until = new Date(note.snoozed_until);
    parts.push(h("span", { className: "snoozed-flag", title: absoluteTime(until) },
      format(gettext("Snoozed until %(time)s"), { time: clockTime(until) })));
  }
  return parts.length ? h("span", { className: "status-line" }, ...parts) : null;
}

/**
 * The buttons that make sense for this user now; each carries data-action and data-id.
 * `snooze`: also offer snoozing (the dialog: a card on a handheld has room for two or three).
 */
export function actionButtons(note, me, { snooze = false } = {}) {
  const button = (action, label, extra = "") => h("button", {
    type: "button",
    className: `btn btn-small ${extra}`.trim(),
    dataset: { action, id: note.id },
  }, label);
  if (note.status === "resolved") return [];
  const buttons = [];
  if (note.status === "open") buttons.push(button("claim", gettext("Claim"), "btn-primary"));
  if (note.status === "claimed" && note.claimed_by?.id === me.id) {
    buttons.push(button("release", gettext("Release")));
  }
  buttons.push(button("resolve", gettext("Resolve")));
  // Snooze is mine alone: out of my unread ones until then (SPEC 13).
  if (note.snoozed_until) {
    buttons.push(button("wake", gettext("Wake")));
  } else if (snooze) {
    buttons.push(button("snooze-hour", gettext("Snooze 1 h")));
    buttons.push(button("snooze-shift", gettext("Snooze until my next shift")));
  }
  return buttons;
}

function eventWord(event) {
  switch (event) {
    case "published": return gettext("Published");
    case "claimed": return gettext("Claimed");
    case "released": return gettext("Released");
    case "resolved": return gettext("Resolved");
    case "escalated": return gettext("Escalated");
    case "reraised": return gettext("Raised again");
    case "snoozed": return gettext("Snoozed");
    case "woke": return gettext("Woke");
    case "action": return gettext("Action");
    case "action_succeeded": return gettext("Action done");
    case "action_failed": return gettext("Action failed");
    case "reminded": return gettext("Reminded");
    case "emailed": return gettext("E-mailed");
    default: return event;
  }
}

/** The history as list items: event, who (or "system"), when. */
export function historyItems(entries) {
  return entries.map((entry) => h("li", { className: "history-entry" },
    h("span", { className: "history-event" }, eventWord(entry.event),
      entry.code ? ` · ${entry.code}` : "",
      entry.recipients != null
        ? ` · ${format(ngettext("%(count)s recipient", "%(count)s recipients", entry.recipients),
                       { count: entry.recipients })}`
        : ""),
    h("span", { className: "history-by" },
      entry.by ? entry.by.username : gettext("system")),
    h("time", { className: "history-at", datetime: entry.at, title: entry.at },
      absoluteTime(new Date(entry.at)))));
}

/** Browser notifications for critical alerts, once the user allowed them. */
export class DesktopAlerts {
  constructor(button) {
    this.button = button;
    this.supported = "Notification" in window;
    this.button?.addEventListener("click", async () => {
      await Notification.requestPermission();
      this.#render();
    });
    this.#render();
  }

  #render() {
    // Offered only while the browser would still ask; a "denied" is the user's answer.
    if (this.button) this.button.hidden = !this.supported || Notification.permission !== "default";
  }

  get allowed() {
    return this.supported && Notification.permission === "granted";
  }

  /** Show a system notification for each critical, unread one; clicking it opens it. */
  show(notes, open) {
    if (!this.allowed) return;
    for (const note of notes) {
      if (note.severity !== "critical" || !isUnread(note)) continue;
      const shown = new Notification(note.title, { body: note.body, tag: note.id });
      shown.addEventListener("click", () => {
        window.focus();
        open(note.id);
      });
    }
  }
}
