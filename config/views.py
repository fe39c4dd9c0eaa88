"""Django's error pages, answered as JSON under /api/ (clients there never parse HTML)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views import defaults

API_PREFIX = "/api/"


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404 for a URL nothing answers: `{"detail"}` under /api/, Django's page elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """400 that Django raises before a view runs (e.g. a malformed request)."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": _("Bad request.")}, status=400)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """500: JSON under /api/ too, never a traceback."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": _("Server error.")}, status=500)
    return defaults.server_error(request)
