// Keyboard and screen readers: Esc closes the open panel (the bell's, the chat, the account
// menu), and closing a panel or a dialog puts focus back on what opened it, so a keyboard or a
// screen reader goes on from where it was instead of from the top of the page.
//
// The page redraws its lists as news comes (opening an alert reads it, and its card is drawn
// again), so the focused button, or the one that opened a dialog, may be gone: focus then goes
// to the button drawn in its place (the same list, the same data-* attributes); dom.js's
// replaceChildren() does this for every redraw.

const panels = [];

function shown(element) {
  return Boolean(element?.isConnected && element.getClientRects().length > 0
    && !element.closest("[hidden], dialog:not([open])"));
}

/**
 * What to focus instead of `element` once the page may have redrawn or hidden it: itself, its
 * twin (the same id, or the same list and data-* attributes), another button of the same alert
 * (data-id), or the button that opens the panel it was in (the bell for the bell's panel).
 */
function rememberFocus(element) {
  const scope = element.parentElement?.closest("[id]");
  const within = scope ? `#${CSS.escape(scope.id)} ` : "";
  const data = [...element.attributes].filter((a) => a.name.startsWith("data-"))
    .map((a) => `[${a.name}="${CSS.escape(a.value)}"]`).join("");
  const selectors = [];
  if (element.id) selectors.push(`#${CSS.escape(element.id)}`);
  if (data) selectors.push(`${within}${element.localName}${data}`);
  if (element.dataset.id) selectors.push(`${within}[data-id="${CSS.escape(element.dataset.id)}"]`);
  for (let box = element.parentElement; box; box = box.parentElement) {
    if (box.id) selectors.push(`[aria-controls="${CSS.escape(box.id)}"]`);
  }
  return () => (shown(element) ? element
    : selectors.flatMap((s) => [...document.querySelectorAll(s)]).find(shown) ?? null);
}

/**
 * Run `redraw()` (which replaces what `container` holds) and return what it returns. When focus
 * was on something it replaced, focus goes to the new one in its place: a keyboard or a screen
 * reader stays where it was while polls redraw the list.
 */
export function keepFocus(container, redraw) {
  const active = document.activeElement;
  const find = active && active !== document.body && container.contains(active)
    ? rememberFocus(active) : null;
  const result = redraw();
  if (find && !active.isConnected) find()?.focus({ preventScroll: true });
  return result;
}

/**
 * A panel Esc closes: `isOpen()`, `close()`, and the `button` that opens it, which gets the
 * focus back when focus was inside the panel (or nowhere).
 */
export function closeOnEscape({ panel, button, isOpen, close }) {
  panels.push({ panel, button, isOpen, close });
}

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
  // A dialog on top closes by itself (the browser's own Esc), and only it.
  if (document.querySelector("dialog[open]")) return;
  for (const entry of panels) {
    if (!entry.isOpen()) continue;
    const inside = entry.panel.contains(document.activeElement);
    entry.close();
    if (inside || document.activeElement === document.body) entry.button.focus();
  }
});

// Dialogs: where focus was when one opened (the element that lost it to the dialog).
const openers = new WeakMap();

document.addEventListener("focusin", (event) => {
  const dialog = event.target.closest?.("dialog[open]");
  const from = event.relatedTarget;
  if (!dialog || openers.has(dialog) || !from || dialog.contains(from)) return;
  if (from !== document.body) openers.set(dialog, rememberFocus(from));
});

for (const dialog of document.querySelectorAll("dialog")) {
  dialog.addEventListener("close", () => {
    const find = openers.get(dialog);
    openers.delete(dialog);
    const active = document.activeElement;
    // The browser puts focus back itself when the opener is still there.
    if (active && active !== document.body && shown(active) && !dialog.contains(active)) return;
    find?.()?.focus();
  });
}
