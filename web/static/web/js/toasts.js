// Small, quiet messages in the corner that go away by themselves.

import { h } from "./dom.js";

export class Toasts {
  constructor(container, { lifetimeMs = 6000, max = 3 } = {}) {
    this.container = container;
    this.lifetimeMs = lifetimeMs;
    this.max = max;
  }

  /** Show `text` (as text); `action` makes the toast a button that runs it. */
  show(text, { tone = "info", action = null } = {}) {
    const body = action
      ? h("button", { type: "button", className: "toast-body" }, text)
      : h("span", { className: "toast-body" }, text);
    const toast = h("div", { className: `toast toast-${tone}` }, body);
    if (action) {
      body.addEventListener("click", () => {
        toast.remove();
        action();
      });
    }
    this.container.append(toast);
    while (this.container.children.length > this.max) this.container.firstElementChild.remove();
    window.setTimeout(() => toast.classList.add("leaving"), this.lifetimeMs);
    window.setTimeout(() => toast.remove(), this.lifetimeMs + 400);
    return toast;
  }
}
