{% load static %}// The service worker of the warehouse page (served at /sw.js, scope /). It keeps the page's
// shell (the page, its scripts, styles, icons and translations) so that the page opens without
// a network, and the last answers of the page's list, unread summary and chats, which it gives
// only when the network does not answer, marked with the time it got them (the page says
// "Offline – as of 14:02", so they never look current). Claims, releases and resolves made
// offline wait in the page's own queue (queue.js), not here.
"use strict";

// Web Push (the push and notificationclick handlers) lives in its own file; a deployment
// without it keeps the offline shell.
try {
  importScripts("{% static 'web/js/sw-push.js' %}");
} catch (error) {
  // No push handlers: nothing else depends on them.
}

const VERSION = "{{ version }}";
const CACHE = `wms-shell-${VERSION}`;
const SHELL = {{ shell_json|safe }};
const PAGE = "{{ page }}";
// Pages and translations depend on who is signed in and their language: the network first.
const NETWORK_FIRST = new Set([PAGE, "{% url 'javascript-catalog' %}"]);
const NETWORK_TIMEOUT_MS = 5000;
// Kept answers: the page asks for it per request with X-Wms-Keep (its user's id). One cache per
// user, and one user's at a time: keeping a user's answer drops any other user's.
const ANSWERS = "wms-answers-";
const KEEP_HEADER = "X-Wms-Keep";
const KEPT_AT_HEADER = "X-Wms-Kept-At";

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(SHELL.map(async (url) => {
      try {
        const response = await fetch(url, { credentials: "same-origin", cache: "no-cache" });
        // The page answers a signed-out visitor with a redirect to the login: not the shell.
        if (response.ok && !response.redirected) await cache.put(url, response);
      } catch {
        // Fetched again on first use.
      }
    }));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("wms-shell-") && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

function timeout(ms) {
  return new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms));
}

async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  try {
    const response = await Promise.race([fetch(request), timeout(NETWORK_TIMEOUT_MS)]);
    if (response.ok && !response.redirected) await cache.put(key, response.clone());
    return response;
  } catch (error) {
    const kept = await cache.match(key);
    if (kept) return kept;
    throw error;
  }
}

async function cacheFirst(request, key) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(key);
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) await cache.put(key, response.clone());
  return response;
}

/** Store a copy of `response` stamped with the time it was known to be current. */
async function keep(cache, key, response) {
  const headers = new Headers(response.headers);
  headers.set(KEPT_AT_HEADER, String(Date.now()));
  const body = await response.blob();
  await cache.put(key, new Response(body, { status: response.status, headers }));
}

async function forgetAnswers(exceptUser = null) {
  for (const name of await caches.keys()) {
    if (name.startsWith(ANSWERS) && name !== ANSWERS + exceptUser) await caches.delete(name);
  }
}

/**
 * The network's answer, kept (a 304 confirms the kept copy: it gets a new time); the kept copy
 * when the network does not answer in time. Kept before it is handed over, so what the page
 * saw is what a reload without a network shows.
 */
async function keptAnswer(request, user) {
  const cache = await caches.open(ANSWERS + user);
  const key = request.url;
  const kept = await cache.match(key);
  let sent = request;
  const tag = request.headers.get("If-None-Match");
  if (tag && kept?.headers.get("ETag") !== tag) {
    // The page's copy is not the one kept here: ask for the whole answer, to keep it.
    const headers = new Headers(request.headers);
    headers.delete("If-None-Match");
    sent = new Request(request, { headers });
  }
  let response;
  try {
    response = await Promise.race([fetch(sent), timeout(NETWORK_TIMEOUT_MS)]);
  } catch (error) {
    if (kept) return kept;
    throw error;
  }
  if (response.status === 200) {
    await keep(cache, key, response.clone());
    await forgetAnswers(user);
  } else if (response.status === 304 && kept) {
    await keep(cache, key, kept);
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "{% url 'logout' %}") {
    // Signing out forgets the signed-in page (it names the user) and the answers kept for
    // them, not the static files.
    event.waitUntil((async () => {
      const cache = await caches.open(CACHE);
      for (const key of NETWORK_FIRST) await cache.delete(key);
      await forgetAnswers();
    })());
    return;
  }
  if (request.method !== "GET") return;
  const user = request.headers.get(KEEP_HEADER);
  if (user && /^[0-9]+$/.test(user) && url.pathname.startsWith("/api/")) {
    event.respondWith(keptAnswer(request, user));
    return;
  }
  const key = url.pathname;
  if (NETWORK_FIRST.has(key) && (request.mode === "navigate" || key !== PAGE)) {
    event.respondWith(networkFirst(request, key));
  } else if (SHELL.includes(key)) {
    event.respondWith(cacheFirst(request, key));
  }
  // Everything else (the rest of the API, the event stream, the admin) goes to the network
  // untouched.
});
