// Web Push in the service worker (SPEC 12), loaded by /sw.js with importScripts().
//
// A pushed alert ({"id", "warehouse", "title", "body", "severity", "status", "url"}) is shown
// with the actions Claim and Open, unless a warehouse page of this site is focused (the page
// shows it itself). Claim claims it without opening the page; Open focuses the page, or opens it.
//
// Claim is a write with the session cookie, so it needs the CSRF token, and a service worker
// cannot read cookies (no document.cookie). It asks GET /api/v1/push/csrf/ for the token
// instead: same origin only (the API sends no CORS headers, so another site can make the
// browser call it but never read the answer), which keeps the token as secret as the page's.

(() => {
  const TEXTS = {
    en: {
      claim: "Claim",
      open: "Open",
      claimed: "Claimed: %s",
      claimedBy: "Claimed by %s",
      failed: "Could not claim: %s",
      offline: "no connection",
      signedOut: "sign in again",
    },
    zh: {
      claim: "认领",
      open: "打开",
      claimed: "已认领：%s",
      claimedBy: "已被 %s 认领",
      failed: "无法认领：%s",
      offline: "没有网络连接",
      signedOut: "请重新登录",
    },
  };

  function text(key, value = "") {
    const language = (self.navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
    return TEXTS[language][key].replace("%s", value);
  }

  const ICON = new URL("/static/web/favicon.svg", self.location.origin).href;
  const PAGE_PATH = new URL(self.registration.scope).pathname;

  function isAlert(value) {
    return value && typeof value === "object" && typeof value.id === "string"
      && Number.isInteger(value.warehouse) && typeof value.title === "string";
  }

  /** The warehouse pages of this site that are open (controlled by this worker or not). */
  async function pages() {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    return windows.filter((client) => {
      const url = new URL(client.url);
      return url.origin === self.location.origin && url.pathname === PAGE_PATH;
    });
  }

  function show(alert, title, extra = {}) {
    return self.registration.showNotification(title, {
      body: alert.body || "",
      tag: alert.id, // the page's own desktop alert for it, and later pushes, replace this one
      renotify: true,
      requireInteraction: alert.severity === "critical",
      icon: ICON,
      data: alert,
      actions: [
        { action: "claim", title: text("claim") },
        { action: "open", title: text("open") },
      ],
      ...extra,
    });
  }

  async function received(data) {
    let alert;
    try {
      alert = data ? data.json() : null;
    } catch {
      return; // not one of ours
    }
    if (!isAlert(alert)) return;
    // A withdrawal (SPEC 17): the alert was resolved (close what shows it) or claimed by a
    // colleague (say who, silently, in its place). Nothing shown of it here: nothing to do.
    if (alert.close || alert.claimed_by) {
      const shown = await self.registration.getNotifications({ tag: alert.id });
      if (alert.close) {
        shown.forEach((notification) => notification.close());
      } else if (shown.length) {
        await self.registration.showNotification(text("claimedBy", alert.claimed_by), {
          body: alert.title,
          tag: alert.id,
          silent: true,
          icon: ICON,
          data: alert,
          actions: [{ action: "open", title: text("open") }],
        });
      }
      return;
    }
    if ((await pages()).some((client) => client.focused)) return; // the page shows it
    // Push services deliver at least once: a copy (or a reminder) of an alert claimed here
    // from its notification leaves the claim shown.
    const [current] = await self.registration.getNotifications({ tag: alert.id });
    if (current?.data?.status === "claimed" && alert.status !== "claimed") return;
    await show(alert, alert.title);
  }

  async function csrfToken() {
    const response = await fetch("/api/v1/push/csrf/", {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      cache: "no-store",
    });
    if (!response.ok) return { status: response.status };
    return { status: response.status, token: (await response.json()).csrf_token };
  }

  async function detail(response) {
    try {
      const payload = await response.json();
      if (typeof payload.detail === "string") return payload.detail;
    } catch {
      // not JSON: fall through
    }
    return `HTTP ${response.status}`;
  }

  /** Claim it with the session cookie, then say how it went (replacing the alert). */
  async function claim(alert) {
    let outcome;
    try {
      const csrf = await csrfToken();
      if (!csrf.token) {
        outcome = text("failed", text("signedOut"));
      } else {
        const response = await fetch(
          `/api/v1/notifications/${encodeURIComponent(alert.id)}/claim/`,
          {
            method: "POST",
            credentials: "same-origin",
            headers: {
              Accept: "application/json",
              "Content-Type": "application/json",
              "X-CSRFToken": csrf.token,
            },
            body: JSON.stringify({ warehouse: alert.warehouse }),
          },
        );
        if (response.ok) {
          await self.registration.showNotification(text("claimed", alert.title), {
            body: alert.body || "",
            tag: alert.id,
            silent: true,
            icon: ICON,
            data: { ...alert, status: "claimed" },
            actions: [{ action: "open", title: text("open") }],
          });
          return;
        }
        outcome = text("failed", response.status === 401 || response.status === 403
          ? text("signedOut") : await detail(response));
      }
    } catch {
      outcome = text("failed", text("offline"));
    }
    await show(alert, outcome, { silent: true, requireInteraction: false });
  }

  /** Focus an open warehouse page (it switches to the alert's warehouse), or open one. */
  async function open(alert) {
    const target = new URL(alert.url || PAGE_PATH, self.location.origin);
    if (target.origin !== self.location.origin) return;
    const [page] = await pages();
    if (page) {
      page.postMessage({ type: "wms-push-open", alert });
      try {
        await page.focus();
      } catch {
        // Only a user's tap may focus a window; the page has switched all the same.
      }
      return;
    }
    await self.clients.openWindow(target.href);
  }

  function clicked(notification, action) {
    notification.close();
    const alert = notification.data;
    if (!isAlert(alert)) return Promise.resolve();
    return action === "claim" ? claim(alert) : open(alert);
  }

  self.addEventListener("push", (event) => event.waitUntil(received(event.data)));
  self.addEventListener("notificationclick", (event) => {
    event.waitUntil(clicked(event.notification, event.action));
  });

  // For tests and the page: the handlers' work as functions.
  self.wmsPush = { received, clicked };
})();
