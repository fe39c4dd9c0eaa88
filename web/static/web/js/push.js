// The "Push alerts" toggle (SPEC 12): subscribes this browser, through the Push API and the
// server's VAPID key, to the critical alerts of the shown warehouse, so they arrive with the
// page closed. The service worker (/sw.js, which loads sw-push.js) shows them.

import { ApiError, request } from "./api.js";
import { byId, h } from "./dom.js";
import { format } from "./i18n.js";

const API = "/api/v1/push/";
const config = JSON.parse(byId("wms-config")?.textContent ?? "null");
const select = byId("warehouse-select");
const supported = config && select && "serviceWorker" in navigator && "PushManager" in window
  && "Notification" in window;

// The warehouses this browser is subscribed for, per user (the server keeps the same list).
const storageKey = () => `wms.push.${config.user.id}`;

function subscribedWarehouses() {
  try {
    const value = JSON.parse(localStorage.getItem(storageKey()) ?? "[]");
    return Array.isArray(value) ? value.filter(Number.isInteger) : [];
  } catch {
    return [];
  }
}

function remember(ids) {
  localStorage.setItem(storageKey(), JSON.stringify([...new Set(ids)].sort((a, b) => a - b)));
}

function shownWarehouse() {
  return Number(select.value);
}

function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function sameKey(subscription, key) {
  const current = subscription.options?.applicationServerKey;
  if (!current) return true; // the browser does not say: assume it is ours
  const a = new Uint8Array(current);
  return a.length === key.length && a.every((byte, i) => byte === key[i]);
}

/** Why turning push alerts on failed: which step ("permission", "worker", "service"). */
class PushFailure extends Error {
  constructor(step, cause = null) {
    super(cause?.message ?? step);
    this.step = step;
  }
}

async function registration() {
  // Registering the same script again is a no-op: the page may register /sw.js elsewhere too.
  try {
    await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch (error) {
    throw new PushFailure("worker", error);
  }
  return navigator.serviceWorker.ready;
}

async function subscription(create) {
  const reg = await registration();
  const existing = await reg.pushManager.getSubscription();
  if (!create) return existing;
  const { public_key: publicKey } = await request("GET", `${API}key/`);
  const key = keyBytes(publicKey);
  if (existing && sameKey(existing, key)) return existing;
  await existing?.unsubscribe(); // made with a key the server no longer has
  try {
    return await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  } catch (error) {
    // NotAllowedError: notifications are blocked; anything else: the browser's push service
    // (Chromium says "Registration failed - push service error" when it cannot reach it).
    throw new PushFailure(error?.name === "NotAllowedError" ? "permission" : "service", error);
  }
}

/** What went wrong and what to do, in a sentence or two for the message under the button. */
function explain(error) {
  let why;
  if (error instanceof PushFailure && error.step === "permission") {
    why = gettext("notifications are blocked for this site. Allow them in the browser's site settings, then tap Push alerts again.");
  } else if (error instanceof PushFailure && error.step === "dismissed") {
    why = gettext("the browser did not get permission to notify. Tap Push alerts again and choose Allow.");
  } else if (error instanceof PushFailure && error.step === "worker") {
    why = gettext("this page could not install its service worker (it needs HTTPS). Ask an administrator.");
  } else if (error instanceof PushFailure) {
    why = gettext("the browser's push service could not be reached. Check the network, then tap Push alerts again.");
  } else if (error instanceof ApiError && error.status === 0) {
    why = gettext("no connection to the server. Tap Push alerts again when the network is back.");
  } else if (error instanceof ApiError && error.status === 400 && error.detail) {
    // The server refuses the endpoint: its host is not an allowed push service.
    why = format(gettext("%(reason)s Ask an administrator to allow this browser's push service."),
                 { reason: error.detail });
  } else {
    why = format(gettext("%(reason)s Tap Push alerts again to retry."),
                 { reason: error?.message || gettext("something went wrong.") });
  }
  return format(gettext("Push alerts are off: %(why)s"), { why });
}

async function save(sub, warehouses) {
  if (warehouses.length) {
    await request("POST", `${API}subscriptions/`, { body: { ...sub.toJSON(), warehouses } });
  } else {
    try {
      await request("DELETE", `${API}subscriptions/`, { body: { endpoint: sub.endpoint } });
      await sub.unsubscribe();
    } catch (error) {
      // 404: another user has subscribed this browser since; it is theirs to switch off.
      if (error?.status !== 404) throw error;
    }
  }
  remember(warehouses);
}

function setup() {
  const anchor = byId("desktop-alerts");
  const button = h(
    "button",
    {
      id: "push-alerts",
      className: "btn btn-quiet btn-small",
      type: "button",
      "aria-pressed": "false",
      title: gettext("Critical alerts of this warehouse reach this device even when the page is closed"),
    },
    gettext("Push alerts"),
  );
  // Said under the button, not in a tooltip: a touch screen never shows one.
  const message = h("p", { id: "push-message", className: "form-error push-message",
                           role: "alert", hidden: true });
  if (anchor) {
    anchor.after(button);
    anchor.parentElement.append(message);
  } else {
    select.parentElement.append(button, message);
  }

  let on = false;
  async function render() {
    const sub = await subscription(false).catch(() => null);
    on = Boolean(sub) && subscribedWarehouses().includes(shownWarehouse());
    button.setAttribute("aria-pressed", String(on));
    button.classList.toggle("is-on", on);
    // Blocked: the button goes, but a message saying so stays until the warehouse changes.
    button.hidden = Notification.permission === "denied";
  }

  function say(text) {
    message.textContent = text;
    message.hidden = !text;
    if (text) message.scrollIntoView({ block: "nearest" });
  }

  button.addEventListener("click", async () => {
    button.disabled = true;
    say("");
    try {
      const others = subscribedWarehouses().filter((id) => id !== shownWarehouse());
      if (on) {
        const sub = await subscription(false);
        if (sub) await save(sub, others);
        else remember(others);
      } else {
        const permission = await Notification.requestPermission();
        if (permission === "denied") throw new PushFailure("permission");
        if (permission !== "granted") throw new PushFailure("dismissed");
        await save(await subscription(true), [...others, shownWarehouse()]);
      }
    } catch (error) {
      say(explain(error));
    } finally {
      button.disabled = false;
      await render();
    }
  });
  select.addEventListener("change", () => {
    say("");
    void render();
  });

  // A push notification's Open: show its warehouse.
  navigator.serviceWorker.addEventListener("message", (event) => {
    if (event.data?.type === "wms-push-open") showWarehouse(event.data.alert?.warehouse);
  });

  // Keep the server's copy current (the browser may have renewed the subscription).
  subscription(false).then(async (sub) => {
    const warehouses = subscribedWarehouses();
    if (sub && warehouses.length && Notification.permission === "granted") {
      await request("POST", `${API}subscriptions/`, { body: { ...sub.toJSON(), warehouses } });
    }
  }).catch(() => {}).finally(render);
}

function showWarehouse(id) {
  if (!Number.isInteger(id) || id === shownWarehouse()) return;
  if (![...select.options].some((option) => Number(option.value) === id)) return;
  select.value = String(id);
  select.dispatchEvent(new Event("change")); // the page follows its picker
}

if (supported) {
  // Opened from a push notification: /?warehouse=<id>&notification=<id>.
  showWarehouse(Number(new URLSearchParams(window.location.search).get("warehouse")));
  setup();
}
