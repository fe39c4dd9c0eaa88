{% load static %}// The service worker of the warehouse page (scope /). The Web Push handlers live in
// sw-push.js; this file only loads them and takes over open pages at once.
importScripts("{% static 'web/js/sw-push.js' %}");

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
