"""The session's user from the directory: Django's ModelBackend, without a query per request."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend

from . import cache as directory


class DirectoryModelBackend(ModelBackend):
    """ModelBackend (sign-in, permissions) whose `get_user` - what every session-authenticated
    request calls - reads the user from the directory's per-process cache.

    The cache is exact (any save of a user drops it in every process at their next request),
    so Django's checks that follow `get_user` still see the truth at the next request: a
    deactivated user is refused here, and a changed password no longer matches the session's
    auth hash, which signs the session out (django.contrib.auth.get_user).
    """

    def get_user(self, user_id: Any) -> Any | None:
        user = directory.user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
