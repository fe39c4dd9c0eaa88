"""Every change the directory's cache depends on replaces its version, right away and again
after the transaction commits."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from .cache import bump


def changed(using: str = "default") -> None:
    """A change made past the signals (`QuerySet.update`): replace the version now and again
    after the transaction commits, as a save would."""
    bump()
    transaction.on_commit(bump, using=using)


def _changed(sender: Any, using: str = "default", **kwargs: Any) -> None:
    changed(using)


def _saved(sender: Any, update_fields: Any = None, **kwargs: Any) -> None:
    # A sign-in saves only last_login: nothing the directory decides on. Not bumping for it
    # keeps every sign-in from making every process refill its cache and re-check its streams.
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    _changed(sender, **kwargs)


def connect() -> None:
    """Connect the signals (once, at start-up): users (is_active, is_staff, ...), groups,
    permissions, tokens, warehouses and message types saved, deleted or updated in bulk, and
    the memberships and permission grants of users and groups."""
    from rest_framework.authtoken.models import Token

    from subscriptions.models import MessageType, Warehouse
    from subscriptions.signals import rows_updated

    user_model = get_user_model()
    for model in (user_model, Group, Permission, Token, Warehouse, MessageType):
        post_save.connect(_saved, sender=model, dispatch_uid=f"directory-save-{model.__name__}")
        post_delete.connect(
            _changed, sender=model, dispatch_uid=f"directory-delete-{model.__name__}"
        )
    rows_updated.connect(_changed, dispatch_uid="directory-rows-updated")  # the admin's bulk
    for name, through in (
        ("user-groups", user_model.groups.through),
        ("user-permissions", user_model.user_permissions.through),
        ("group-permissions", Group.permissions.through),
    ):
        m2m_changed.connect(_changed, sender=through, dispatch_uid=f"directory-{name}")
