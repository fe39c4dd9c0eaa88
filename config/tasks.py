"""Queueing Celery tasks from after-commit hooks, where raising helps nobody."""

from __future__ import annotations

import logging
from typing import Any

from celery import Task

logger = logging.getLogger(__name__)


def enqueue(task: Task, *args: Any) -> bool:
    """Queue `task` with these arguments; False (and a warning) if the broker refused.

    Runs after a database change committed, so the change stands either way: what the task
    would have done is left to the periodic sweep that backs it up.
    """
    try:
        task.delay(*args)
    except Exception as exc:  # the broker's errors vary: kombu, redis, OS
        logger.warning("Could not queue %s%r, left to the periodic sweep: %s", task.name, args, exc)
        return False
    return True
