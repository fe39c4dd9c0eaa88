"""Each request reads the directory's version at most once."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .cache import request_scope


class DirectoryMiddleware:
    """Each request reads the directory version at most once."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_scope():
            return self.get_response(request)
