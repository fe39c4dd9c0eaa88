"""Where features hook into notifications: filled in their `AppConfig.ready()`, so the core
imports no feature (STYLE: features hook into the core, not the other way round).

- `after_publish`: called after a notification reached its inboxes (never for a replay or a
  publish that stored nothing), e.g. to schedule its reminders. A hook that fails is logged
  and counted; the publish stands.
- `actions`: the provider of N's `actions` (SPEC 14): the active actions of a message type in
  the active language. `of` may read the database or Redis; `now` must not (the event
  stream's loop calls it) and answers None when it holds nothing for the type yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .domain import Notification

logger = logging.getLogger(__name__)

AfterPublish = Callable[[Notification, Sequence[str]], None]

after_publish: list[AfterPublish] = []


def run_after_publish(notification: Notification, inboxes: Sequence[str]) -> None:
    for hook in after_publish:
        try:
            hook(notification, inboxes)
        except Exception:  # a feature's follow-up must not undo or fail the publish
            logger.exception("After-publish hook %r failed for %s", hook, notification.id)


ActionList = list[dict[str, Any]]


@dataclass
class ActionsProvider:
    of: Callable[[str], ActionList] = lambda type_code: []
    now: Callable[[str], ActionList | None] = lambda type_code: []


actions = ActionsProvider()
