"""The answer to a login while it is throttled (django-axes calls it): the sign-in page's look
with a clear message, status 429 and Retry-After, for the UI's and the admin's login alike."""

from __future__ import annotations

import math
from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict | None = None,
) -> HttpResponse:
    cool_off = settings.AXES_COOLOFF_TIME
    seconds = int(cool_off.total_seconds()) if isinstance(cool_off, timedelta) else 0
    response = render(
        request,
        "registration/locked_out.html",
        {"minutes": max(1, math.ceil(seconds / 60))},
        status=429,
    )
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
