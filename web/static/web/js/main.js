// The warehouse page: reads its configuration, picks the warehouse, and runs one poll loop
// for notifications and chat.

import { ChatPanel } from "./chat.js";
import { byId } from "./dom.js";
import { closeOnEscape } from "./focus.js";
import { refreshTimes } from "./i18n.js";
import { Notices } from "./notices.js";
import { NotificationCenter } from "./notifications.js";
import { Connection } from "./offline.js";
import { OnShift } from "./onshift.js";
import { Poller } from "./poller.js";
import { Memory } from "./storage.js";
import { MuteControl } from "./mute.js";
import { LiveStream } from "./stream.js";
import { Toasts } from "./toasts.js";

const config = JSON.parse(byId("wms-config").textContent);
const memory = new Memory(config.user.id);
const toasts = new Toasts(byId("toasts"));
const baseTitle = document.title;
const unread = { notifications: 0, chats: 0 };

function updateTitle() {
  // The tab title carries the count, for operators who keep the WMS in another tab.
  const total = unread.notifications + unread.chats;
  document.title = total > 0 ? `(${total}) ${baseTitle}` : baseTitle;
}

const notifications = new NotificationCenter({
  api: config.api,
  memory,
  warehouses: config.warehouses,
  types: config.messageTypes,
  toasts,
  onCountChange: (count) => {
    unread.notifications = count;
    updateTitle();
  },
});

const chat = new ChatPanel({
  api: config.api,
  me: config.user,
  toasts,
  onUnreadChange: (count) => {
    unread.chats = count;
    updateTitle();
  },
});

// Notices I must read, pinned above the alerts (SPEC 15).
// Acknowledging one also reads its notifications: the next poll, at once, drops the badge.
const notices = new Notices({ url: config.api.notices, toasts, onRead: () => poller.pollNow() });

const status = byId("connection-status");
const statusText = byId("connection-text");

function onHealth({ state, error }) {
  document.body.dataset.connection = state;
  if (state === "ok") {
    status.hidden = true;
    return;
  }
  status.hidden = false;
  if (state === "signed-out") {
    statusText.textContent = gettext("Signed out. Reload the page to sign in again.");
    status.classList.add("is-error");
  } else {
    statusText.textContent = error?.transient === false
      ? gettext("Updates failed. Retrying…")
      : gettext("Reconnecting…");
  }
  status.title = statusText.textContent; // the whole text, where the row shortens it
}

const poller = new Poller({
  intervalMs: config.pollIntervalSeconds * 1000,
  maxBackoffMs: config.maxBackoffSeconds * 1000,
  onHealth,
  tick: async () => {
    // Actions that waited for the network go first, so the poll already shows their result.
    await notifications.flushQueue();
    // Both halves run even when one fails, so a chat outage does not freeze the bell.
    const outcomes = await Promise.allSettled([
      notifications.poll(), chat.poll(), notices.refresh(),
    ]);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  },
});

// The pill (Live, Polling, Offline) and "Offline – as of 14:02" over what is shown.
const connection = new Connection({
  pill: byId("delivery-mode"),
  markers: document.querySelectorAll(".offline-copy"),
  pollIntervalSeconds: config.pollIntervalSeconds,
});

// Pushed events when the stream gets through; polling (as above) whenever it does not.
const live = config.stream ? new LiveStream({
  url: config.api.stream,
  cursorOf: (warehouseId) => memory.cursor(warehouseId),
  onReady: () => poller.pollNow(), // catch up on what is not replayed (chat, read elsewhere)
  onNotification: (note) => {
    notifications.receive(note);
    notices.receive(note); // a notice (or its new version) to read: pinned at once
  },
  onReminder: (note) => notifications.remind(note),
  onClaimExpired: (note) => notifications.claimExpired(note),
  onReset: (warehouseId) => {
    notifications.reset(warehouseId); // `ready` follows, and its poll reloads the inbox
  },
  onChat: (event) => {
    if (!chat.receive(event)) poller.pollNow(); // a chat this page does not know yet
  },
  onMode: (mode) => {
    const isLive = mode === "live";
    connection.setMode(mode);
    poller.setInterval((isLive ? config.streamReconcileSeconds : config.pollIntervalSeconds) * 1000);
    if (!isLive) poller.pollNow();
  },
}) : null;

// Who is on shift now, in the bell's panel: asked each time the panel opens.
const onShift = new OnShift({ url: config.api.onShift });
// My mute (SPEC 17), in the bell's panel: asked when the warehouse changes and the panel opens.
// A change redraws what it covers and asks the server for the counts at once.
const mute = new MuteControl({
  url: config.api.mute,
  onShiftUrl: config.api.onShift,
  me: config.user,
  onChange: () => {
    notifications.redraw();
    poller.pollNow();
  },
});
byId("bell-button")?.addEventListener("click", () => {
  if (!byId("notification-panel").hidden) {
    void onShift.refresh();
    void mute.refresh();
  }
});

function chooseWarehouse(id) {
  memory.warehouse = id;
  notifications.setWarehouse(id);
  onShift.setWarehouse(id);
  mute.setWarehouse(id);
  notices.setWarehouse(id);
  if (!byId("notification-panel").hidden) void onShift.refresh();
  live?.follow(id);
  const select = byId("warehouse-select");
  if (select) select.value = String(id);
}

// The remembered warehouse if it is still offered, else the default (UI_DEFAULT_WAREHOUSE, or
// the first: subscribed ones come first).
const known = new Set(config.warehouses.map((w) => w.id));
const remembered = memory.warehouse;
if (config.warehouses.length) {
  chooseWarehouse(known.has(remembered) ? remembered : config.defaultWarehouse);
}
byId("warehouse-select")?.addEventListener("change", (event) => {
  chooseWarehouse(Number(event.target.value));
  poller.pollNow();
});

// The account menu (language, sign out) folds behind one button on a handheld.
const accountButton = byId("account-button");
const accountMenu = byId("account-menu");
function toggleAccount(open = !accountMenu.classList.contains("is-open")) {
  accountMenu.classList.toggle("is-open", open);
  accountButton.setAttribute("aria-expanded", String(open));
}
accountButton?.addEventListener("click", () => toggleAccount());
document.addEventListener("click", (event) => {
  if (!event.target.closest(".account")) toggleAccount(false);
});

// Esc closes each panel; focus goes back to the button that opened it (focus.js).
const bellPanel = byId("notification-panel");
if (bellPanel) {
  closeOnEscape({
    panel: bellPanel,
    button: byId("bell-button"),
    isOpen: () => !bellPanel.hidden,
    close: () => notifications.togglePanel(false),
  });
}
closeOnEscape({
  panel: byId("chat-panel"),
  button: byId("chat-button"),
  isOpen: () => chat.isOpen,
  close: () => chat.toggle(false),
});
if (accountButton) {
  closeOnEscape({
    panel: accountMenu,
    button: accountButton,
    // Only a handheld folds the menu behind its button; a wide screen shows it inline.
    isOpen: () => accountMenu.classList.contains("is-open"),
    close: () => toggleAccount(false),
  });
}

// The service worker keeps the page's shell for when the network is gone (HTTPS or localhost).
if ("serviceWorker" in navigator && config.serviceWorker) {
  navigator.serviceWorker.register(config.serviceWorker, { scope: "/" }).catch(() => {
    // No offline shell then; everything else works the same.
  });
}

window.setInterval(() => refreshTimes(), 30_000);
poller.start();
