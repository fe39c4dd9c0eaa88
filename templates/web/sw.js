{% load static %}// The service worker of the warehouse page (served at /sw.js, scope /). It keeps the page's
// shell (the page, its scripts, styles, icons and translations) so that the page opens without
// a network; the REST API is never cached (stale alerts would look current). Claims, releases
// and resolves made offline wait in the page's own queue (queue.js), not here.
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

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "{% url 'logout' %}") {
    // Signing out forgets the signed-in page (it names the user), not the static files.
    event.waitUntil((async () => {
      const cache = await caches.open(CACHE);
      for (const key of NETWORK_FIRST) await cache.delete(key);
    })());
    return;
  }
  if (request.method !== "GET") return;
  const key = url.pathname;
  if (NETWORK_FIRST.has(key) && (request.mode === "navigate" || key !== PAGE)) {
    event.respondWith(networkFirst(request, key));
  } else if (SHELL.includes(key)) {
    event.respondWith(cacheFirst(request, key));
  }
  // Everything else (the API, the event stream, the admin) goes to the network untouched.
});
