// The "Push alerts" toggle (SPEC 12): subscribes this browser, through the Push API and the
// server's VAPID key, to the critical alerts of the shown warehouse, so they arrive with the
// page closed. The service worker (/sw.js, which loads sw-push.js) shows them.

import { request } from "./api.js";
import { byId, h } from "./dom.js";

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

async function registration() {
  // Registering the same script again is a no-op: the page may register /sw.js elsewhere too.
  await navigator.serviceWorker.register("/sw.js", { scope: "/" });
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
  return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
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
  if (anchor) anchor.after(button);
  else select.parentElement.append(button);

  let on = false;
  async function render() {
    const sub = await subscription(false).catch(() => null);
    on = Boolean(sub) && subscribedWarehouses().includes(shownWarehouse());
    button.setAttribute("aria-pressed", String(on));
    button.classList.toggle("is-on", on);
    button.hidden = Notification.permission === "denied";
  }

  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const others = subscribedWarehouses().filter((id) => id !== shownWarehouse());
      if (on) {
        const sub = await subscription(false);
        if (sub) await save(sub, others);
        else remember(others);
      } else if ((await Notification.requestPermission()) === "granted") {
        await save(await subscription(true), [...others, shownWarehouse()]);
      }
    } catch (error) {
      button.title = error?.message || String(error);
    } finally {
      button.disabled = false;
      await render();
    }
  });
  select.addEventListener("change", render);

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
