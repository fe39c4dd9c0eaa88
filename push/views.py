"""The service worker script at /sw.js (scope `/`): it loads the Web Push handlers."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string


def service_worker(request: HttpRequest) -> HttpResponse:
    """Served from the root (a service worker controls only pages under its own path), never
    from a stale cache: browsers check it for updates."""
    response = HttpResponse(
        render_to_string("push/sw.js"), content_type="application/javascript; charset=utf-8"
    )
    response["Cache-Control"] = "no-cache"
    response["Service-Worker-Allowed"] = "/"
    return response
