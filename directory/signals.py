"""The directory's own cache (tokens with their users, session users, roles, warehouses and
message types) declared as a holding: a change of any of these models, or of a user's groups
or permissions, replaces the directory's version (directory/holdings.py)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from . import holdings


def connect() -> None:
    """Declare the directory's models (once, at start-up)."""
    user = get_user_model()._meta.label  # "auth.User"
    holdings.declare(
        "directory",
        models=(
            user,
            f"{user}_groups",
            f"{user}_user_permissions",
            "auth.Group",
            "auth.Group_permissions",
            "auth.Permission",
            "authtoken.Token",
            "subscriptions.Warehouse",
            "subscriptions.MessageType",
        ),
    )
