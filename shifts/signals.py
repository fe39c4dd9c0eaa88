"""A shift saved or deleted replaces the directory's version (right away and after the
transaction commits), so every process reloads its schedule at its next request."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from directory.cache import bump


def _changed(sender: Any, using: str = "default", **kwargs: Any) -> None:
    bump()
    transaction.on_commit(bump, using=using)


def connect() -> None:
    from .models import Shift

    post_save.connect(_changed, sender=Shift, dispatch_uid="shifts-save")
    post_delete.connect(_changed, sender=Shift, dispatch_uid="shifts-delete")
