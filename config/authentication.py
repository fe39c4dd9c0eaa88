"""Session authentication that also checks CSRF on reads (for the few GETs that change state).
Token authentication is the directory's (directory/authentication.py): it reads its cache."""

from __future__ import annotations

import copy
from typing import Any, cast

from django.http import QueryDict
from django.utils.datastructures import MultiValueDict
from drf_spectacular.authentication import SessionScheme
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request


class CsrfOnEveryMethodSessionAuthentication(SessionAuthentication):
    """Like DRF's SessionAuthentication, but a GET must carry the CSRF token too.

    For an endpoint whose GET changes state (kept for token clients, which CSRF does not
    concern): a cross-site link or <img> sends the session cookie but cannot send the CSRF
    header, so it is refused (403) before anything happens.
    """

    def enforce_csrf(self, request: Request) -> None:
        if request.method not in SAFE_METHODS:
            super().enforce_csrf(request)
            return
        # Django's CSRF check accepts safe methods unseen; run it on a copy that says POST.
        # The copy has an empty form body, so the token can only come from the header.
        probe: Any = copy.copy(request._request)
        probe.method = "POST"
        probe.__dict__.update(_post=QueryDict(), _files=MultiValueDict())
        probe.__dict__.pop("csrf_processing_done", None)
        # Django's CSRF check (all that enforce_csrf runs) reads only what HttpRequest has.
        super().enforce_csrf(cast(Request, probe))


class CsrfOnEveryMethodSessionScheme(SessionScheme):
    """The OpenAPI description: the same session cookie as DRF's SessionAuthentication."""

    target_class = "config.authentication.CsrfOnEveryMethodSessionAuthentication"
    name = "cookieAuthWithCsrfOnReads"
