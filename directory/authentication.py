"""Token authentication from the directory's per-process cache (the REST API's and the
stream's), and its OpenAPI description."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.authentication import TokenScheme
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from . import cache as directory


class CachedTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, with the token and its user from directory.cache's
    per-process cache (exact: any change of users, roles or tokens is seen at the next
    request), so a poll costs no database query."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        token = directory.token(key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token


class CachedTokenScheme(TokenScheme):
    """The OpenAPI description: the same `Authorization: Token <key>` header as DRF's."""

    target_class = "directory.authentication.CachedTokenAuthentication"
