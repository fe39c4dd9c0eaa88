// Alert actions on the page (SPEC 14): the buttons of an alert's actions, pressing one (once:
// the server answers a second press with the same run), and scan to confirm: the action's
// dialog opens with its field focused, so a keyboard-wedge barcode scanner types into it and
// its Enter submits; a mismatch is said next to the field, and the field is selected so that
// the next scan replaces it. Everything typed by people goes in as text.

import { post, describeError, idempotencyKey } from "./api.js";
import { byId, h } from "./dom.js";
import { format } from "./i18n.js";

/** Buttons for the alert's actions (none once it is resolved): data-alert-action and data-id. */
export function alertActionButtons(note) {
  if (note.status === "resolved") return [];
  return (note.actions ?? []).map((action) => h("button", {
    type: "button",
    className: "btn btn-small alert-action",
    dataset: { alertAction: action.code, id: note.id },
  }, action.label));
}

export class ActionRunner {
  /**
   * url: the notifications endpoint ("/api/v1/notifications/"). warehouse(): the shown one.
   * find(id): the alert as the page has it. toasts: the page's news line.
   * onDone(): a run was started (or an earlier one answered): reload what the page shows.
   */
  constructor({ url, warehouse, find, toasts, onDone }) {
    this.url = url;
    this.warehouse = warehouse;
    this.find = find;
    this.toasts = toasts;
    this.onDone = onDone;
    this.dialog = byId("action-dialog");
    this.form = byId("action-form");
    this.input = byId("action-scan");
    this.error = byId("action-error");
    this.pending = null; // {note, action, key, scan}: what the dialog confirms
    this.form?.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#confirm();
    });
    this.dialog?.querySelector("[data-cancel]")?.addEventListener("click", () => this.dialog.close());
    this.dialog?.addEventListener("close", () => { this.pending = null; });
  }

  /** The user pressed an action's button on alert `id`. */
  start(id, code) {
    const note = this.find(id);
    const action = note?.actions?.find((a) => a.code === code);
    if (!note || !action) return;
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
    byId("action-scan-label").textContent = format(gettext("Scan %(field)s to confirm"),
                                                   { field: action.confirm_field });
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
    const body = { warehouse: this.warehouse() };
    if (scan !== null) body.scan = scan;
    try {
      const answer = await post(`${this.url}${note.id}/actions/${encodeURIComponent(action.code)}/`,
                                body, { "Idempotency-Key": key });
      if (inDialog) this.dialog.close();
      const run = answer.run;
      const text = run.status === "succeeded"
        ? format(gettext("%(action)s: done already."), { action: action.label })
        : format(gettext("%(action)s: sent to the WMS."), { action: action.label });
      this.toasts.show(text, { tone: "info" });
      this.onDone();
    } catch (error) {
      const field = error?.payload?.field;
      const text = field
        ? format(gettext("That is not the %(field)s of this alert. Scan again."), { field })
        : describeError(error);
      if (inDialog) {
        this.#say(text);
        this.input.select(); // the next scan replaces what was read
        this.input.focus();
      } else {
        this.toasts.show(text, { tone: "warning" });
      }
    }
  }

  #say(text) {
    this.error.textContent = text;
    this.error.hidden = !text;
    this.input.setAttribute("aria-invalid", text ? "true" : "false");
  }
}
