// Small, quiet messages that go away by themselves. They live in the header's status line,
// which has a height of its own: a message never covers the list or its buttons, and never
// pushes them around under a finger. The newest one is shown; it replaces the one before.

import { h } from "./dom.js";

export class Toasts {
  constructor(container, { lifetimeMs = 6000, max = 1 } = {}) {
    this.container = container;
    this.lifetimeMs = lifetimeMs;
    this.max = max;
  }

  /**
   * Show `text` (as text); `action` makes the toast a button that runs it, or, with
   * `actionLabel`, adds a button of its own with that label beside the text (e.g. "Try
   * again"). `warehouse` ties it to the warehouse it is news of, so switching to another
   * warehouse takes it away. `lifetimeMs`: how long it stays (default: the toasts');
   * `title`: what a pointer's hover shows (default: the text).
   */
  show(text, {
    tone = "info", action = null, actionLabel = null, warehouse = null, lifetimeMs = null,
    title = text,
  } = {}) {
    const separate = action && actionLabel;
    // The text wraps onto a second line of the status row rather than being cut.
    const words = h("span", { className: "toast-text" }, text);
    const body = action && !separate
      ? h("button", { type: "button", className: "toast-body", title }, words)
      : h("span", { className: "toast-body", title }, words);
    const button = separate
      ? h("button", { type: "button", className: "toast-action" }, actionLabel)
      : null;
    // One with a button of its own says more ("… failed: the WMS answered 404"): its text
    // takes two lines of the status row rather than being cut.
    const toast = h("div", {
      className: `toast toast-${tone}${separate ? " toast-two-lines" : ""}`,
      role: "status",
    }, body, button);
    if (warehouse !== null) toast.dataset.warehouse = String(warehouse);
    if (action) {
      (button ?? body).addEventListener("click", () => {
        toast.remove();
        action();
      });
    }
    this.container.append(toast);
    while (this.container.children.length > this.max) this.container.firstElementChild.remove();
    const lifetime = lifetimeMs ?? this.lifetimeMs;
    window.setTimeout(() => toast.classList.add("leaving"), lifetime);
    window.setTimeout(() => toast.remove(), lifetime + 400);
    return toast;
  }

  /** Take away the toasts of other warehouses than `except` (all tied ones when null). */
  clear({ except = null } = {}) {
    for (const toast of [...this.container.children]) {
      const of = toast.dataset.warehouse;
      if (of !== undefined && of !== String(except)) toast.remove();
    }
  }
}
