// Building DOM from data. Text always goes in through textContent or text nodes, never
// through HTML parsing: titles, bodies and chat messages are typed by other people.

import { keepFocus } from "./focus.js";

/**
 * Create an element. `props` sets properties (className, dataset, hidden, ...) and
 * attributes (keys containing "-", or listed in ATTRIBUTES); children are nodes or strings,
 * strings becoming text nodes.
 */
const ATTRIBUTES = new Set(["role", "for", "datetime", "title", "lang", "tabindex"]);

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") {
      Object.assign(element.dataset, value);
    } else if (key.includes("-") || ATTRIBUTES.has(key)) {
      element.setAttribute(key, value === true ? "" : String(value));
    } else {
      element[key] = value;
    }
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace all children of `parent` with `children` (focus on one moves to its new twin). */
export function replaceChildren(parent, children) {
  return keepFocus(parent, () => {
    parent.replaceChildren();
    return append(parent, children);
  });
}

export function byId(id) {
  return document.getElementById(id);
}

/** Show or hide a badge holding a count; 0 hides it (but the live region keeps its text). */
export function setBadge(badge, count) {
  const shown = count > 99 ? "99+" : String(count);
  if (badge.textContent !== shown) badge.textContent = shown;
  badge.dataset.count = String(count);
}

/** The first letter of a name, for an avatar ("?" for a blank one). */
export function initial(name) {
  return (Array.from(name.trim())[0] ?? "?").toUpperCase();
}
