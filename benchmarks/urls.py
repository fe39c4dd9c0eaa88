"""The product's URLs, plus the floor the polls are measured against (benchmarks only).

The product's patterns are listed, not included: a path resolves through as many levels as
under config.urls, the production root, and errors are answered by the same handlers."""

from django.urls import path

from benchmarks.views import FloorView, plain_floor
from config.urls import handler400, handler404, handler500
from config.urls import urlpatterns as product

__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]

urlpatterns = [
    path("bench/floor/", FloorView.as_view(), name="bench-floor"),
    path("bench/plain-floor/", plain_floor, name="bench-plain-floor"),
    *product,
]
