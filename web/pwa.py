"""The installable page (SPEC 12): the web app manifest and the service worker.

Both are served from the site's root: a service worker controls only the paths below its own
URL, so `/sw.js` (not `/static/…`) is what lets it keep the page at `/` for offline use.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

# What the page needs to draw itself without a network: its scripts, styles, icons and the
# JavaScript catalogs of both languages. The page itself (`/`) is added as it is fetched.
SHELL_STATIC = [
    "web/app.css",
    "web/favicon.svg",
    "web/icons/icon-192.png",
    "web/js/language.js",
    "web/js/main.js",
    "web/js/alarm.js",
    "web/js/alert-actions.js",
    "web/js/api.js",
    "web/js/chat.js",
    "web/js/contacts.js",
    "web/js/dom.js",
    "web/js/focus.js",
    "web/js/handover.js",
    "web/js/i18n.js",
    "web/js/lifecycle.js",
    "web/js/notifications.js",
    "web/js/offline.js",
    "web/js/notices.js",
    "web/js/onshift.js",
    "web/js/mute.js",
    "web/js/poller.js",
    "web/js/push.js",
    "web/js/queue.js",
    "web/js/storage.js",
    "web/js/stream.js",
    "web/js/toasts.js",
]


def shell_urls() -> list[str]:
    return [reverse("warehouse"), reverse("javascript-catalog"), *map(static, SHELL_STATIC)]


@cache
def _shell_version() -> str:
    """Changes whenever a file of the shell changes, so a new deploy replaces the old cache."""
    from django.contrib.staticfiles import finders

    digest = hashlib.sha256()
    for name in SHELL_STATIC:
        found = finders.find(name)
        if isinstance(found, str):
            with open(found, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()[:16]


@require_GET
def manifest(request: HttpRequest) -> JsonResponse:
    """`/manifest.webmanifest`: what a phone needs to install the page as an app."""
    icons = [
        {"src": static("web/favicon.svg"), "sizes": "any", "type": "image/svg+xml"},
        *(
            {
                "src": static(f"web/icons/icon-{size}.png"),
                "sizes": f"{size}x{size}",
                "type": "image/png",
                "purpose": "any",
            }
            for size in (192, 512)
        ),
        {
            "src": static("web/icons/icon-maskable.svg"),
            "sizes": "any",
            "type": "image/svg+xml",
            "purpose": "maskable",
        },
        *(
            {
                "src": static(f"web/icons/icon-maskable-{size}.png"),
                "sizes": f"{size}x{size}",
                "type": "image/png",
                "purpose": "maskable",
            }
            for size in (192, 512)
        ),
    ]
    body = {
        "id": "/",
        "name": "WMS Notify",
        "short_name": "WMS Notify",
        "description": gettext("Warehouse alerts and chat"),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "orientation": "any",
        "background_color": "#f3f5f7",
        "theme_color": "#2f6f8f",
        "icons": icons,
    }
    response = JsonResponse(body, json_dumps_params={"ensure_ascii": False})
    response["Content-Type"] = "application/manifest+json"
    return response


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """`/sw.js`, scope `/`: keeps the page's shell for when the network is gone."""
    script = render_to_string(
        "web/sw.js",
        {
            "version": _shell_version(),
            "shell_json": json.dumps(shell_urls()),
            "page": reverse("warehouse"),
        },
    )
    response = HttpResponse(script, content_type="text/javascript; charset=utf-8")
    # Browsers check for a new worker on every visit; it must never be answered from a cache.
    response["Cache-Control"] = "no-cache"
    response["Service-Worker-Allowed"] = "/"
    return response
