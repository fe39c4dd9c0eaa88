// Alert actions on the page (SPEC 14): the buttons of an alert's actions, pressing one (once:
// the server answers a second press with the same run), and scan to confirm: the action's
// dialog opens with its field focused, so a keyboard-wedge barcode scanner types into it and
// its Enter submits; a mismatch is said next to the field, and the field is selected so that
// the next scan replaces it. An action the alert's data gives nothing to scan for is shown
// disabled with the server's reason, never offered to scan in vain.
//
// Outcomes (SPEC 14, "Outcomes on the page"): a press is sent to the WMS by the server's
// outbox, later. The page follows each run it knows of (GET .../actions/, the alert's runs)
// until it ends, and says on the alert's card and in the dialog what it is: "sent" only
// while it is pending, "done" once it succeeded, and what failed, in the server's words, with
// *Try again* (a new press, with a new Idempotency-Key); the end of a run it watched is also
// told in a toast. Everything typed by people goes in as text.

import { get, post, describeError, idempotencyKey } from "./api.js";
import { byId, h } from "./dom.js";
import { format, timeElement } from "./i18n.js";

// How long to wait before asking again about a pending run: soon at first (the outbox
// usually sends within a second or two), then less often (a WMS retried with back-off).
const WATCH_DELAYS_MS = [1000, 1000, 2000, 2000, 3000, 5000, 5000, 10000];
// At most this many alerts' runs fetched after one load of the list (the rest on the next).
const CHECKS_PER_LOAD = 10;

/** Buttons for the alert's actions (none once it is resolved): data-alert-action and data-id.
 *  One that cannot run on this alert is disabled, with the reason under it. */
export function alertActionButtons(note) {
  if (note.status === "resolved") return [];
  return (note.actions ?? []).map((action) => {
    if (action.available === false) {
      const reasonId = `action-reason-${note.id}-${action.code}`;
      return h("div", { className: "alert-action-off" },
        h("button", {
          type: "button",
          className: "btn btn-small alert-action",
          disabled: true,
          "aria-describedby": reasonId,
          dataset: { alertAction: action.code, id: note.id },
        }, action.label),
        h("p", { className: "action-reason", id: reasonId }, action.reason ?? ""));
    }
    return h("button", {
      type: "button",
      className: "btn btn-small alert-action",
      dataset: { alertAction: action.code, id: note.id },
    }, action.label);
  });
}

function labelOf(note, code) {
  return note?.actions?.find((a) => a.code === code)?.label ?? code;
}

function isMine(note, me) {
  return note.status === "claimed" && note.claimed_by?.id === me.id;
}

export class ActionRunner {
  /**
   * url: the notifications endpoint ("/api/v1/notifications/"). warehouse(): the shown one.
   * find(id): the alert as the page has it. toasts: the page's news line. me: the user.
   * onDone(): a run was started (or an earlier one answered): reload what the page shows.
   * onChange(): what the page knows of runs changed: draw the cards and the dialog again.
   */
  constructor({ url, warehouse, find, toasts, me, onDone, onChange }) {
    this.url = url;
    this.warehouse = warehouse;
    this.find = find;
    this.toasts = toasts;
    this.me = me;
    this.onDone = onDone;
    this.onChange = onChange;
    this.dialog = byId("action-dialog");
    this.form = byId("action-form");
    this.input = byId("action-scan");
    this.error = byId("action-error");
    this.pending = null; // {note, action, key, scan}: what the dialog confirms
    this.runs = new Map(); // alert id -> Map(action code -> R, its newest run)
    this.watched = new Map(); // alert id -> {timer, round}: a pending run is followed
    this.told = new Set(); // run ids whose pending state this page saw: their end is news
    this.checked = new Map(); // alert id -> the cursor at which its runs were fetched
    this.form?.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#confirm();
    });
    this.dialog?.querySelector("[data-cancel]")?.addEventListener("click", () => this.dialog.close());
    this.dialog?.addEventListener("close", () => { this.pending = null; });
  }

  /** Another warehouse is shown: forget the runs of the one left. */
  reset() {
    for (const { timer } of this.watched.values()) window.clearTimeout(timer);
    this.watched.clear();
    this.runs.clear();
    this.checked.clear();
  }

  /** The user pressed an action's button on alert `id` (or *Try again*). */
  start(id, code) {
    const note = this.find(id);
    const action = note?.actions?.find((a) => a.code === code);
    if (!note || !action || action.available === false) return;
    if (action.confirm_field) {
      this.#ask(note, action);
    } else {
      void this.#press(note, action, null, idempotencyKey());
    }
  }

  #ask(note, action) {
    this.pending = { note, action, key: null, scan: null };
    byId("action-dialog-title").textContent = action.label;
    byId("action-dialog-alert").textContent = note.title;
    // In words ("Scan the bin"), never the data's key.
    byId("action-scan-label").textContent = action.confirm_label ?? action.label;
    this.input.value = "";
    this.#say("");
    if (!this.dialog.open) this.dialog.showModal();
    this.input.focus(); // the scanner types here; its Enter submits the form
  }

  async #confirm() {
    const pending = this.pending;
    if (!pending) return;
    const scan = this.input.value;
    if (!scan.trim()) {
      this.#say(gettext("Scan the code first."));
      return;
    }
    // The same scan sent again (no answer came) keeps its key: the server answers it once.
    if (pending.key === null || pending.scan !== scan) {
      pending.key = idempotencyKey();
      pending.scan = scan;
    }
    const submit = this.form.querySelector("button[type=submit]");
    submit.disabled = true;
    try {
      await this.#press(pending.note, pending.action, scan, pending.key, { inDialog: true });
    } finally {
      submit.disabled = false;
    }
  }

  async #press(note, action, scan, key, { inDialog = false } = {}) {
    const warehouse = this.warehouse();
    const body = { warehouse };
    if (scan !== null) body.scan = scan;
    try {
      const answer = await post(`${this.url}${note.id}/actions/${encodeURIComponent(action.code)}/`,
                                body, { "Idempotency-Key": key });
      if (inDialog) this.dialog.close();
      const run = answer.run;
      // "Sent" only while it is pending: the outcome is told when it comes.
      const text = run.status === "succeeded"
        ? format(gettext("%(action)s: done already."), { action: action.label })
        : format(gettext("%(action)s: sent to the WMS."), { action: action.label });
      this.toasts.show(text, { tone: "info", warehouse });
      this.#learn(note.id, [run], { pressed: true });
      this.onDone();
    } catch (error) {
      const field = error?.payload?.field;
      let text = describeError(error);
      if (field && inDialog) {
        text = gettext("That is not what this alert asks for. Scan again.");
      }
      if (inDialog) {
        this.#say(text);
        this.input.select(); // the next scan replaces what was read
        this.input.focus();
      } else {
        this.toasts.show(text, { tone: "warning", warehouse });
      }
    }
  }

  #say(text) {
    this.error.textContent = text;
    this.error.hidden = !text;
    this.input.setAttribute("aria-invalid", text ? "true" : "false");
  }

  // --- Outcomes ---------------------------------------------------------------------------

  /**
   * The list was (re)loaded: fetch the runs of my alerts that have actions and changed since
   * their runs were last fetched (a failed run leaves the alert claimed by whoever pressed).
   * Bounded per load; alerts with a pending run are followed anyway.
   */
  follow(notes) {
    const due = notes.filter((note) => (note.actions ?? []).length > 0
      && isMine(note, this.me)
      && this.checked.get(note.id) !== note.cursor
      && !this.watched.has(note.id));
    for (const note of due.slice(0, CHECKS_PER_LOAD)) {
      this.checked.set(note.id, note.cursor);
      void this.#fetch(note.id);
    }
  }

  /** What the page knows of the runs on this alert, newest first (one per action). */
  runsOf(id) {
    const found = this.runs.get(id);
    if (!found) return [];
    return [...found.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  /**
   * Lines for an alert's card (and its dialog): for each of its actions' newest run, pending
   * ("sent to the WMS"), failed (what failed, and *Try again* while the alert can take a
   * press) or succeeded ("done"). A failed run of an alert someone else holds now, or that is
   * resolved, is history: the History list has it.
   */
  outcomeLines(note) {
    const lines = [];
    for (const run of this.runsOf(note.id)) {
      const label = labelOf(note, run.action);
      if (run.status === "pending") {
        const text = run.error
          ? format(gettext("%(action)s: not sent yet. %(error)s"),
                   { action: label, error: run.error.message })
          : format(gettext("%(action)s: sent to the WMS, waiting for its answer…"),
                   { action: label });
        lines.push(h("p", { className: "run-line run-pending", dataset: { run: run.status } }, text));
      } else if (run.status === "succeeded") {
        lines.push(h("p", { className: "run-line run-succeeded", dataset: { run: run.status } },
          format(gettext("%(action)s: done."), { action: label }), " ",
          run.finished_at ? timeElement(run.finished_at, "run-time") : null));
      } else if (note.status !== "resolved"
                 && (note.status === "open" || isMine(note, this.me))) {
        const action = note.actions?.find((a) => a.code === run.action);
        const retry = action && action.available !== false
          ? h("button", {
            type: "button",
            className: "btn btn-small run-retry",
            dataset: { retry: run.action, note: note.id },
          }, gettext("Try again"))
          : null;
        lines.push(h("div", { className: "run-line run-failed", dataset: { run: run.status } },
          h("p", { className: "run-text" }, this.#failedText(label, run)),
          retry));
      }
    }
    return lines;
  }

  #failedText(label, run) {
    return format(gettext("%(action)s: failed. %(error)s"),
                  { action: label, error: run.error?.message ?? gettext("The WMS did not do it.") });
  }

  /** Runs of alert `id` as the server answered them (newest first): keep the newest of each
   *  action, follow the pending ones, and tell the end of one this page saw pending. */
  #learn(id, runs, { pressed = false } = {}) {
    const first = !this.runs.has(id);
    const known = this.runs.get(id) ?? new Map();
    const fresh = new Map();
    for (const run of runs) {
      if (!fresh.has(run.action)) fresh.set(run.action, run);
    }
    let changed = first && fresh.size > 0;
    for (const [code, run] of fresh) {
      const before = known.get(code);
      if (before && before.created_at > run.created_at) continue; // an older answer
      changed ||= !before || before.id !== run.id || before.status !== run.status
        || before.attempts !== run.attempts || before.error?.message !== run.error?.message;
      known.set(code, run);
      if (run.status === "pending") this.told.add(run.id);
      else if (this.told.delete(run.id)) this.#tell(id, run);
    }
    this.runs.set(id, known);
    const waiting = [...known.values()].some((run) => run.status === "pending");
    if (waiting) this.#watch(id, { restart: pressed });
    else this.#unwatch(id);
    if (changed) this.onChange();
  }

  /** A run this page saw pending has ended: a toast says how, in words. */
  #tell(id, run) {
    const note = this.find(id);
    const label = labelOf(note, run.action);
    const warehouse = this.warehouse();
    if (run.status === "succeeded") {
      this.toasts.show(format(gettext("%(action)s: done."), { action: label }),
                       { tone: "info", warehouse });
      this.onDone(); // a resolving action resolved it: show that at once
      return;
    }
    const action = note?.actions?.find((a) => a.code === run.action);
    const canRetry = note && action && action.available !== false && note.status !== "resolved";
    // Short enough to be read whole in a handheld's status row; the card and the dialog
    // (and the toast's title) say what failed.
    this.toasts.show(format(gettext("%(action)s: failed."), { action: label }), {
      title: this.#failedText(label, run),
      tone: "warning",
      warehouse,
      action: canRetry ? () => this.start(id, run.action) : null,
      actionLabel: canRetry ? gettext("Try again") : null,
      lifetimeMs: 15000,
    });
  }

  #watch(id, { restart = false } = {}) {
    const current = this.watched.get(id);
    if (current && !restart) return;
    if (current) window.clearTimeout(current.timer);
    const round = restart || !current ? 0 : current.round;
    this.#schedule(id, round);
  }

  #schedule(id, round) {
    const delay = WATCH_DELAYS_MS[Math.min(round, WATCH_DELAYS_MS.length - 1)];
    const timer = window.setTimeout(async () => {
      await this.#fetch(id);
      const still = this.watched.get(id);
      if (still && still.timer === timer) this.#schedule(id, round + 1);
    }, delay);
    this.watched.set(id, { timer, round });
  }

  #unwatch(id) {
    const current = this.watched.get(id);
    if (current) window.clearTimeout(current.timer);
    this.watched.delete(id);
  }

  async #fetch(id) {
    const warehouse = this.warehouse();
    try {
      const answer = await get(`${this.url}${id}/actions/`, { warehouse });
      if (warehouse !== this.warehouse()) return; // switched while it ran
      this.#learn(id, answer.results);
    } catch (error) {
      if (error?.status === 404) this.#unwatch(id); // gone (expired) or no longer mine to see
      // Otherwise the poll loop shows the connection problem; the next round asks again.
    }
  }
}
