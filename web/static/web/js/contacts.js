// The contact picker of the new-chat form: autocomplete over my contacts (most recent first),
// keyboard navigation as a combobox, and the chosen recipients as removable chips.

import { get } from "./api.js";
import { byId, h, initial, replaceChildren } from "./dom.js";
import { format } from "./i18n.js";

const CONTACT_LIMIT = 8;
const SEARCH_DELAY_MS = 150;

export class ContactPicker {
  /**
   * `onChange(recipients)` after every change of the chosen recipients; `onSearchError(error)`
   * when a search fails, `onSearchError(null)` when one succeeds again.
   */
  constructor({ url, me, onChange, onSearchError }) {
    this.url = url;
    this.me = me;
    this.onChange = onChange;
    this.onSearchError = onSearchError;
    this.recipients = [];
    this.options = [];
    this.activeOption = -1;
    this.searchSeq = 0;
    this.searchTimer = null;

    this.input = byId("contact-input");
    this.optionList = byId("contact-options");
    this.chips = byId("recipient-chips");

    this.#wire();
  }

  #wire() {
    this.input.addEventListener("input", () => this.#searchSoon());
    this.input.addEventListener("focus", () => this.#searchSoon());
    this.input.addEventListener("keydown", (event) => this.#key(event));
    this.input.addEventListener("blur", () => this.#closeOptions());
    // mousedown, not click: choosing must happen before the input's blur closes the list.
    this.optionList.addEventListener("mousedown", (event) => {
      const option = event.target.closest("[data-index]");
      if (!option) return;
      event.preventDefault();
      this.#choose(Number(option.dataset.index));
    });
    this.chips.addEventListener("click", (event) => {
      const remove = event.target.closest("[data-remove]");
      if (!remove) return;
      this.recipients = this.recipients.filter((r) => String(r.id) !== remove.dataset.remove);
      this.#renderChips();
      this.input.focus();
    });
  }

  /** No recipients chosen (a fresh form). */
  clear() {
    this.recipients = [];
    this.#renderChips();
  }

  focus() {
    this.input.focus();
  }

  #searchSoon() {
    window.clearTimeout(this.searchTimer);
    this.searchTimer = window.setTimeout(() => this.#search(), SEARCH_DELAY_MS);
  }

  async #search() {
    const seq = ++this.searchSeq;
    let answer;
    try {
      answer = await get(this.url, { q: this.input.value.trim() });
    } catch (error) {
      if (seq === this.searchSeq) this.onSearchError(error);
      return;
    }
    // A later search has started, or the person has left the field: this answer is stale.
    if (seq !== this.searchSeq || document.activeElement !== this.input) return;
    this.onSearchError(null);
    const chosen = new Set(this.recipients.map((r) => r.id));
    this.options = answer.results
      .filter((c) => c.id !== this.me.id && !chosen.has(c.id))
      .slice(0, CONTACT_LIMIT);
    this.activeOption = this.options.length ? 0 : -1;
    this.#renderOptions();
  }

  #renderOptions() {
    const open = this.options.length > 0;
    replaceChildren(this.optionList, this.options.map((contact, index) => h("li", {
      id: `contact-option-${index}`,
      role: "option",
      className: index === this.activeOption ? "contact-option active" : "contact-option",
      "aria-selected": String(index === this.activeOption),
      dataset: { index: String(index) },
    }, h("span", { className: "avatar avatar-small", "aria-hidden": "true" },
      initial(contact.username)), contact.username)));
    this.optionList.hidden = !open;
    this.input.setAttribute("aria-expanded", String(open));
    if (open && this.activeOption >= 0) {
      this.input.setAttribute("aria-activedescendant", `contact-option-${this.activeOption}`);
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }

  #closeOptions() {
    this.options = [];
    this.activeOption = -1;
    this.#renderOptions();
  }

  #key(event) {
    const count = this.options.length;
    if (event.key === "ArrowDown" && count) {
      event.preventDefault();
      this.activeOption = (this.activeOption + 1) % count;
      this.#renderOptions();
    } else if (event.key === "ArrowUp" && count) {
      event.preventDefault();
      this.activeOption = (this.activeOption - 1 + count) % count;
      this.#renderOptions();
    } else if (event.key === "Enter") {
      // Enter chooses the highlighted contact; with nobody chosen it must not submit the form.
      if (count && this.activeOption >= 0) {
        event.preventDefault();
        this.#choose(this.activeOption);
      } else if (!this.recipients.length) {
        event.preventDefault();
      }
    } else if (event.key === "Escape" && count) {
      event.preventDefault();
      this.#closeOptions();
    } else if (event.key === "Backspace" && !this.input.value && this.recipients.length) {
      this.recipients.pop();
      this.#renderChips();
    }
  }

  #choose(index) {
    const contact = this.options[index];
    if (!contact) return;
    this.recipients.push(contact);
    this.input.value = "";
    this.#closeOptions();
    this.#renderChips();
    this.input.focus();
  }

  #renderChips() {
    replaceChildren(this.chips, this.recipients.map((r) => h("li", { className: "chip" },
      h("span", {}, r.username),
      h("button", {
        type: "button", className: "chip-remove", dataset: { remove: String(r.id) },
        "aria-label": format(gettext("Remove %(name)s"), { name: r.username }),
      }, "×"))));
    this.onChange(this.recipients);
  }
}
