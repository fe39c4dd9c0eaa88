"""Top-level URLs: the REST API v1, the operational endpoints /healthz and /metrics, admin,
the OpenAPI schema and docs, i18n, and each app's own pages.

Each app mounts its own URLs and this module names none: an installed app's `api/urls.py`
goes under /api/v1/, and an app whose AppConfig sets `url_prefix` has its `urls.py` mounted
there. The API comes first and in one piece: a poll's path is resolved without trying any
other prefix, and every app's API is one list.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from django.apps import apps
from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from config import api_docs, health


def api_patterns() -> list[Any]:
    """Every installed app's `api/urls.py` patterns, in INSTALLED_APPS order."""
    found: list[Any] = []
    for config in apps.get_app_configs():
        if (Path(config.path) / "api" / "urls.py").is_file():
            found += import_module(f"{config.name}.api.urls").urlpatterns
    return found


def app_pages() -> list[Any]:
    """Each app's `urls.py` under its AppConfig's `url_prefix` (an app that sets none has no
    pages), in INSTALLED_APPS order; the site's root ("") last, as it could take anything."""
    mounted = [
        (prefix, config.name)
        for config in apps.get_app_configs()
        if (prefix := getattr(config, "url_prefix", None)) is not None
    ]
    mounted.sort(key=lambda mount: mount[0] == "")
    return [path(prefix, include(f"{name}.urls")) for prefix, name in mounted]


urlpatterns = [
    path("api/v1/", include(api_patterns())),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    # Signed-in users only when DEBUG is off, unless API_DOCS_PUBLIC (config/api_docs.py).
    path("api/schema/", api_docs.SchemaView.as_view(), name="schema"),
    path("api/docs/", api_docs.DocsView.as_view(url_name="schema"), name="api-docs"),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language, for the switcher
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    *app_pages(),
]

handler400 = "config.views.bad_request"
handler404 = "config.views.not_found"
handler500 = "config.views.server_error"
