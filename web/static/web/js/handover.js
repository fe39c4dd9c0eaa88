// A shift handover (SPEC 12, 13) shows in the inbox as a card: its title and summary say, in
// the page's language, what the outgoing shift leaves (open, claimed by someone going off
// shift, escalated, snoozed, resolved), and an Accept button replaces Claim / Resolve.
// Accepting resolves it for everyone. Its dialog tells each part with links to the alerts.
//
// The title and body stored with the notification are in the language of the worker that
// published it, so the page says them again from `data` (shift, role, counts); the sentences
// are the ones shifts/wording.py says in the admin and the stored body.

import { get } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { LANG, format } from "./i18n.js";
import { noticeTitle } from "./notices.js";

export const HANDOVER_TYPE = "SHIFT_HANDOVER";
const HANDOVERS = "/api/v1/handovers/";

export function isHandover(note) {
  return note.message_type === HANDOVER_TYPE && Number.isInteger(note.data?.handover_id);
}

/** Its title in the page's language (one published before `data` named the shift: as stored). */
export function handoverTitle(note) {
  const { shift, role } = note.data ?? {};
  if (typeof shift !== "string" || typeof role !== "string") return note.title;
  return format(gettext("Shift handover: %(shift)s (%(role)s)"), { shift, role });
}

/** The title to show for any notification: a handover's and a notice's escalation's in the
 * page's language. */
export function shownTitle(note) {
  return isHandover(note) ? handoverTitle(note) : noticeTitle(note);
}

// The sections in the order they are told, and the sentence that counts each.
const SECTIONS = ["open", "claimed_off_shift", "escalated", "snoozed", "resolved"];
const SENTENCES = {
  open: (count) => ngettext("%(count)s alert is still open.",
                           "%(count)s alerts are still open.", count),
  claimed_off_shift: (count) => ngettext(
    "%(count)s alert was claimed by someone going off shift.",
    "%(count)s alerts were claimed by someone going off shift.", count),
  escalated: (count) => ngettext("%(count)s alert was escalated during the shift.",
                                "%(count)s alerts were escalated during the shift.", count),
  snoozed: (count) => ngettext("%(count)s alert is snoozed past the change.",
                              "%(count)s alerts are snoozed past the change.", count),
  resolved: (count) => ngettext("%(count)s alert was resolved during the shift.",
                               "%(count)s alerts were resolved during the shift.", count),
};
// Chinese sentences end with "。" and follow one another without a space.
const JOIN = LANG.startsWith("zh") ? "" : " ";

function sentence(section, count) {
  return format(SENTENCES[section](count), { count });
}

function sentencesOf(counts) {
  return SECTIONS.filter((name) => Number.isInteger(counts?.[name]))
    .map((name) => sentence(name, counts[name]));
}

/** Its summary: one sentence per section, from its counts (without counts: the stored body). */
export function handoverSummary(note) {
  const told = sentencesOf(note.data?.counts);
  return told.length ? told.join(JOIN) : note.body;
}

/** Accept (44 px, like every button), or who accepted it once it is done. */
export function handoverActions(note) {
  if (note.status === "resolved") {
    const who = note.resolved_by?.username;
    return [h("span", { className: "handover-accepted" },
      who ? format(gettext("Accepted by %(name)s"), { name: who }) : gettext("Accepted"))];
  }
  return [h("button", {
    type: "button",
    className: "btn btn-small btn-primary",
    dataset: { action: "accept", id: note.id },
  }, gettext("Accept handover"))];
}

/** The API path that accepts it. */
export function acceptPath(note) {
  return `${HANDOVERS}${note.data.handover_id}/accept/`;
}

const minutes = new Intl.NumberFormat(LANG, { style: "unit", unit: "minute", unitDisplay: "long" });
const seconds = new Intl.NumberFormat(LANG, { style: "unit", unit: "second", unitDisplay: "long" });

function duration(value) {
  return value < 90 ? seconds.format(Math.round(value)) : minutes.format(Math.round(value / 60));
}

/**
 * The handover's part of the dialog: each section's sentence with a link to each alert it
 * names (the first SHIFT_HANDOVER_MAX_ITEMS), then the claims given back and the median time
 * to claim. The sentences show at once from the notification; the lists when the handover
 * has loaded.
 */
export class HandoverDetails {
  /** `openAlert(id)` shows one alert (the dialog then leaves the handover). */
  constructor(container, { openAlert }) {
    this.container = container;
    this.shown = null; // the notification whose handover is shown
    container?.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-alert]");
      if (!link) return;
      event.preventDefault();
      openAlert(link.dataset.alert);
    });
  }

  /** Show the handover of `note`, or nothing when it is another kind of notification. */
  async show(note) {
    if (!this.container) return;
    if (!note || !isHandover(note)) {
      this.shown = null;
      this.container.hidden = true;
      replaceChildren(this.container, []);
      return;
    }
    const same = this.shown === note.id;
    this.shown = note.id;
    this.container.hidden = false;
    if (same) return; // shown (or loading) already
    replaceChildren(this.container, this.#sections(note.data.counts, null, note.warehouse));
    try {
      const handover = await get(`${HANDOVERS}${note.data.handover_id}/`);
      if (this.shown !== note.id) return;
      replaceChildren(this.container,
        this.#sections(handover.content.counts, handover.content, note.warehouse));
    } catch {
      // The sentences stay; the lists come with the next opening.
      if (this.shown === note.id) this.shown = null;
    }
  }

  #sections(counts, content, warehouse) {
    const parts = SECTIONS.filter((name) => Number.isInteger(counts?.[name])).map((name) => {
      const items = content?.[name] ?? [];
      const more = counts[name] - items.length;
      return h("section", { className: "handover-section" },
        h("p", { className: "handover-sentence" }, sentence(name, counts[name])),
        items.length ? h("ul", { className: "handover-alerts" },
          items.map((alert) => h("li", {},
            h("a", {
              className: `handover-alert sev-${alert.severity}`,
              href: `/?warehouse=${warehouse}&notification=${encodeURIComponent(alert.id)}`,
              dataset: { alert: alert.id },
            }, alert.title),
            this.#who(name, alert)))) : null,
        content && more > 0
          ? h("p", { className: "handover-more muted" },
            format(ngettext("and %(count)s more", "and %(count)s more", more), { count: more }))
          : null);
    });
    if (content?.released) {
      parts.push(h("p", { className: "handover-sentence" }, format(ngettext(
        "%(count)s claim was given back to open at the end of the shift.",
        "%(count)s claims were given back to open at the end of the shift.",
        content.released), { count: content.released })));
    }
    const median = content?.median_time_to_claim_seconds;
    if (typeof median === "number") {
      parts.push(h("p", { className: "handover-sentence" },
        format(gettext("Median time to claim: %(duration)s."), { duration: duration(median) })));
    }
    return parts;
  }

  /** Who held or snoozed it, beside its link. */
  #who(section, alert) {
    if (section === "claimed_off_shift" && alert.claimed_by?.username) {
      return h("span", { className: "handover-who muted" },
        format(gettext("claimed by %(name)s"), { name: alert.claimed_by.username }));
    }
    if (section === "snoozed" && alert.snoozed_by?.username) {
      return h("span", { className: "handover-who muted" },
        format(gettext("snoozed by %(name)s until %(time)s"), {
          name: alert.snoozed_by.username,
          time: new Intl.DateTimeFormat(LANG, { dateStyle: "short", timeStyle: "short" })
            .format(new Date(alert.until)),
        }));
    }
    return null;
  }
}
