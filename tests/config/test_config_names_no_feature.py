"""`config/` names no feature: each app registers its own beat entries, task queues and Lua
preludes from its own code (config.beat_schedule.register, `@shared_task(queue=...)`,
config.lua_compose.register), and declares its own settings (its conf.py). The import contracts
(pyproject.toml) see imports only; these checks see the strings: a task's name, a task module's
routes, an app's files by path, a setting only apps read."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from django.apps import apps
from django.conf import global_settings, settings

CONFIG = Path(settings.BASE_DIR) / "config"


def product_apps() -> list[str]:
    """The project's own apps (those whose folder is in the repository)."""
    base = Path(settings.BASE_DIR).resolve()
    return [
        config.name
        for config in apps.get_app_configs()
        if Path(config.path).resolve().parent == base
    ]


def product_task_names() -> list[str]:
    from config.celery import app
    from config.queues import _import_tasks

    _import_tasks()
    return [name for name in app.tasks if not name.startswith("celery.")]


def features_named(folder: Path, task_names: list[str], app_names: list[str]) -> list[str]:
    """Each place a Python file of `folder` names a task, a task module (a route such as
    "push.tasks.*") or an app's file by its path (`ROOT / "directory" / "lua"`)."""
    patterns = [re.escape(name) for name in task_names]
    patterns += [rf"\b{re.escape(name)}\.tasks\b" for name in app_names]
    patterns += [rf"[\"']{re.escape(name)}[\"']\s*/" for name in app_names]
    found = []
    for path in sorted(folder.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern in patterns:
                if re.search(pattern, line):
                    found.append(f"{path.name}:{number}: {line.strip()}")
    return found


def test_config_names_no_feature_task_route_or_file():
    task_names = product_task_names()
    app_names = [name for name in product_apps() if name != "config"]
    assert "notifications.tasks.escalate_notifications" in task_names  # the list is real
    assert {"notifications", "push", "directory"} <= set(app_names)

    assert features_named(CONFIG, task_names, app_names) == []


def test_the_check_finds_what_settings_used_to_name(tmp_path):
    """What config/ held before each app registered its own: every kind is found."""
    (tmp_path / "settings.py").write_text(
        'CELERY_TASK_ROUTES = {"push.tasks.*": {"queue": "push"}}\n'
        'X = {"task": "shifts.tasks.hand_over_shifts"}\n'
        'P = ROOT / "directory" / "lua" / "version_check.lua"\n',
        encoding="utf-8",
    )
    found = features_named(
        tmp_path, product_task_names(), [name for name in product_apps() if name != "config"]
    )
    assert [line.split(":")[1] for line in found] == ["1", "2", "2", "3"]


def test_every_beat_entry_comes_from_an_app_and_names_its_own_task():
    """The schedule is filled only by the apps: each entry's task is a registered task of
    the product (a typo would never run)."""
    task_names = set(product_task_names())
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert len(schedule) >= 14
    for name, entry in schedule.items():
        assert entry["task"] in task_names, name


def settings_defined(path: Path) -> list[str]:
    """The settings a settings file sets: its module-level UPPERCASE names."""
    names = []
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return names


@cache
def sources(folder: Path) -> str:
    """The text of every Python file under `folder` (migrations aside)."""
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*.py"))
        if "migrations" not in path.parts
    )


def reads(text: str, name: str) -> bool:
    """Whether code reads the setting: `settings.NAME` or `getattr(settings, "NAME"...)`."""
    return (
        re.search(rf"settings\.{name}\b|getattr\(\s*settings,\s*[\"']{name}[\"']", text) is not None
    )


def settings_of_apps(settings_file: Path) -> dict[str, list[str]]:
    """Each setting of `settings_file` that only the project's apps read, with the apps: the
    core (config/'s other modules), Django and the third-party apps read none of them. Such a
    setting is a feature's, and belongs in its app's conf.py."""
    base = Path(settings.BASE_DIR).resolve()
    core = "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted(CONFIG.glob("*.py"))
        if path.name not in {"settings.py", "app_settings.py"}
    )
    product = [name for name in product_apps() if name != "config"]
    # Third-party apps read their own settings by many spellings (axes.conf, DRF's
    # api_settings): their name anywhere in the package counts.
    third_party = "\n".join(
        sources(Path(config.path))
        for config in apps.get_app_configs()
        if Path(config.path).resolve().parent != base
    )
    found = {}
    for name in settings_defined(settings_file):
        if hasattr(global_settings, name) or reads(core, name) or name in third_party:
            continue
        readers = [app for app in product if reads(sources(base / app), name)]
        if readers:
            found[name] = readers
    return found


def test_config_settings_name_no_feature_setting():
    """config/settings.py sets the core's settings only: any setting it sets that only the
    project's apps read (a feature's limit, interval or batch) belongs in that app's conf.py."""
    assert settings_of_apps(CONFIG / "settings.py") == {}


def test_the_check_finds_a_feature_setting_in_settings(tmp_path):
    """What config/settings.py used to hold is found; the core's and Django's are not."""
    (tmp_path / "settings.py").write_text(
        'CHAT_MAX_MEMBERS = env.int("CHAT_MAX_MEMBERS", default=50)\n'
        "NOTIFICATION_PAGE_MAX = 200\n"
        'METRICS_TOKEN = env("METRICS_TOKEN", default="")\n'  # config/metrics.py reads it
        "LOGIN_URL = 'login'\n"  # Django's, which web reads too
        "AXES_COOLOFF_TIME: object = None\n",  # django-axes', which web reads too
        encoding="utf-8",
    )
    found = settings_of_apps(tmp_path / "settings.py")
    assert found["CHAT_MAX_MEMBERS"] == ["messaging"]
    assert {"notifications", "delivery", "stream"} <= set(found["NOTIFICATION_PAGE_MAX"])
    assert set(found) == {"CHAT_MAX_MEMBERS", "NOTIFICATION_PAGE_MAX"}
