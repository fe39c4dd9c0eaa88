"""System checks of the Web Push settings: a wrong key or subject stops start-up, not a push."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

from . import hosts, keys


@checks.register()
def web_push_settings(app_configs: Any, **kwargs: Any) -> list[checks.CheckMessage]:
    problems: list[checks.CheckMessage] = []
    try:
        keys.configured()
    except keys.BadVapidKey as exc:
        problems.append(
            checks.Error(
                f"The VAPID key pair: {exc}.",
                hint="`python manage.py webpush_keys` prints a valid pair.",
                id="push.E001",
            )
        )
    subject = settings.WEB_PUSH_SUBJECT
    if not subject.startswith(("mailto:", "https://")):
        problems.append(
            checks.Error(
                "WEB_PUSH_SUBJECT must be a mailto: or https: URL (push services refuse others).",
                id="push.E002",
            )
        )
    for entry in settings.WEB_PUSH_ALLOWED_HOSTS:
        if hosts.parse_entry(entry) is None:
            problems.append(
                checks.Error(
                    f"WEB_PUSH_ALLOWED_HOSTS: {entry!r} is not a host, host:port or *.domain.",
                    id="push.E003",
                )
            )
    return problems
