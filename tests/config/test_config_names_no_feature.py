"""`config/` names no feature: each app registers its own beat entries, task queues and Lua
preludes from its own code (config.beat_schedule.register, `@shared_task(queue=...)`,
config.lua_compose.register). The import contracts (pyproject.toml) see imports only; these
checks see the strings: a task's name, a task module's routes, an app's files by path."""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings

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
