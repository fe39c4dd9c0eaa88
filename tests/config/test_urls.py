"""The URLs: each app mounts its own (config/urls.py names none), the API first and in one
piece, so resolving a poll's path tries no other prefix (SPEC 9: the API is what is polled)."""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.urls import URLResolver, get_resolver, resolve, reverse

from tests.config.test_config_names_no_feature import product_apps

CONFIG = Path(settings.BASE_DIR) / "config"


def test_config_urls_name_no_app():
    text = (CONFIG / "urls.py").read_text(encoding="utf-8")
    named = [
        name
        for name in product_apps()
        if name != "config" and re.search(rf"[\"']{re.escape(name)}[./]", text)
    ]
    assert named == []


def test_the_api_is_the_first_prefix_and_one_include():
    patterns = get_resolver("config.urls").url_patterns
    first = patterns[0]
    assert isinstance(first, URLResolver)
    assert str(first.pattern) == "api/v1/"
    assert [str(p.pattern) for p in patterns].count("api/v1/") == 1


def test_every_app_with_an_api_is_mounted_under_api_v1_in_app_order():
    with_api = [
        config.name
        for config in apps.get_app_configs()
        if (Path(config.path) / "api" / "urls.py").exists()
    ]
    assert {"notifications", "messaging", "quiet"} <= set(with_api)
    api = get_resolver("config.urls").url_patterns[0]
    assert isinstance(api, URLResolver)
    modules = [p.callback.__module__.split(".")[0] for p in api.url_patterns]
    # In INSTALLED_APPS order, each app's patterns together.
    assert list(dict.fromkeys(modules)) == with_api


def test_names_and_paths_are_as_before():
    assert reverse("notifications-unread") == "/api/v1/notifications/unread/"
    assert reverse("notifications") == "/api/v1/notifications/"
    assert resolve("/api/v1/notifications/unread/").url_name == "notifications-unread"
    assert reverse("warehouse") == "/"
    assert reverse("demo-replenishment-task") == "/inventory/webhooks/replenishment-task/"
    assert reverse("healthz") == "/healthz"
    assert reverse("admin:index") == "/admin/"
