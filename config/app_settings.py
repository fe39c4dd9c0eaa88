"""Each app's own settings: the environment, and how settings.py gathers the apps' settings.

An app of this repository may hold a `conf.py` (APP_SETTINGS_MODULE): its UPPERCASE names are
that app's settings, read from the environment with `env` below, each with its default and its
comment. config/settings.py reads the core's settings (Django, security, database, Redis, the
Celery app, the REST framework, languages) and, at its end, adds every installed app's, found
through INSTALLED_APPS: the core names no app. They are ordinary Django settings afterwards
(`django.conf.settings`, override_settings, pytest-django's `settings` fixture).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

# The one environment every setting is read from: the process's, and an optional `.env` file
# at the repository's root (the process's variables win).
env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

# The module of an app that holds its settings.
APP_SETTINGS_MODULE = "conf"


def apps_settings(
    installed_apps: Iterable[str], taken: Mapping[str, object], root: Path = BASE_DIR
) -> dict[str, Any]:
    """The settings of every installed app under `root` (this repository) that has a settings
    module, in INSTALLED_APPS order. A name set twice (by two apps, or by an app and the core's
    `taken`) is refused: each setting has one owner."""
    found: dict[str, Any] = {}
    owners: dict[str, str] = {}
    for app in installed_apps:
        # Only apps whose folder is in this repository: a third-party app is not imported
        # before Django is set up.
        if not root.joinpath(*app.split("."), f"{APP_SETTINGS_MODULE}.py").is_file():
            continue
        module = importlib.import_module(f"{app}.{APP_SETTINGS_MODULE}")
        for name, value in vars(module).items():
            if not name.isupper() or name.startswith("_"):
                continue
            if name in taken or name in found:
                owner = owners.get(name, "config/settings.py")
                raise ImproperlyConfigured(f"{app} sets {name}, which {owner} sets already.")
            found[name] = value
            owners[name] = app
    return found
