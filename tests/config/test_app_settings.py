"""Each app's settings come from its own conf.py (config/app_settings.py): found through
INSTALLED_APPS, ordinary Django settings afterwards, and each with one owner."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.app_settings import APP_SETTINGS_MODULE, apps_settings


def test_every_app_setting_is_a_django_setting():
    base = Path(settings.BASE_DIR).resolve()
    names = []
    for config in apps.get_app_configs():
        path = Path(config.path).resolve()
        if path.parent != base or not (path / f"{APP_SETTINGS_MODULE}.py").is_file():
            continue
        module = importlib.import_module(f"{config.name}.{APP_SETTINGS_MODULE}")
        names += [name for name in vars(module) if name.isupper()]
    assert {"CHAT_MAX_MEMBERS", "NOTIFICATION_PAGE_MAX", "STREAM_RETRY_MS"} <= set(names)
    assert [name for name in names if not hasattr(settings, name)] == []


def test_an_app_setting_is_overridden_like_any_setting(settings):
    settings.CHAT_MAX_MEMBERS = 3

    from django.conf import settings as django_settings

    assert django_settings.CHAT_MAX_MEMBERS == 3


def write_app(root: Path, name: str, text: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("", encoding="utf-8")
    (root / name / f"{APP_SETTINGS_MODULE}.py").write_text(text, encoding="utf-8")


def test_a_new_app_is_found_through_installed_apps(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_app(
        tmp_path, "hs_new_app", "from config.app_settings import env\nNEW_LIMIT = 7\n_x = 1\n"
    )
    write_app(tmp_path, "hs_not_installed", "OTHER = 1\n")

    found = apps_settings(["django.contrib.admin", "hs_new_app"], taken={}, root=tmp_path)

    assert found == {"NEW_LIMIT": 7}
    # A third-party app's conf.py (django-axes has one) is its own business, never imported.
    assert (Path(apps.get_app_config("axes").path) / "conf.py").is_file()
    assert apps_settings(["axes"], taken={}) == {}


def test_a_setting_set_twice_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_app(tmp_path, "hs_first_app", "LIMIT = 1\n")
    write_app(tmp_path, "hs_second_app", "LIMIT = 2\nDEBUG = True\n")

    with pytest.raises(ImproperlyConfigured, match="hs_second_app sets LIMIT, which hs_first_app"):
        apps_settings(["hs_first_app", "hs_second_app"], taken={}, root=tmp_path)
    with pytest.raises(ImproperlyConfigured, match=r"sets DEBUG, which config/settings\.py sets"):
        apps_settings(["hs_second_app"], taken={"DEBUG": False}, root=tmp_path)
