"""The user the product works with, and the signed-in user of a request.

AUTH_USER_MODEL is Django's own `auth.User` (the setting is left at its default): services and
selectors take that type, never `AbstractBaseUser`, which has no `groups` (the roles whose
inboxes a user reads).
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.request import Request

__all__ = ["User", "signed_in"]


def signed_in(request: HttpRequest | Request) -> User:
    """The request's user, once authentication let it through (IsAuthenticated, the API's
    default permission, or LoginRequiredMixin). An anonymous user here is a view that forgot
    its permission: refused (403) rather than served as nobody."""
    user = request.user
    if isinstance(user, AnonymousUser):
        raise PermissionDenied
    return user
