"""The product's URLs, plus the floors the polls are measured against (benchmarks only).

The product's patterns are listed, not included: a path resolves through as many levels as
under config.urls, the production root, and errors are answered by the same handlers. The
floors sit under one `bench/` prefix before them, so a product path pays one failed prefix
match for them, not one per floor."""

from django.urls import include, path

from benchmarks.views import FloorView, ReadModelFloorView, RoundTripFloorView, plain_floor
from config.urls import handler400, handler404, handler500
from config.urls import urlpatterns as product

__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]

floors = [
    path("floor/", FloorView.as_view(), name="bench-floor"),
    path("plain-floor/", plain_floor, name="bench-plain-floor"),
    path("round-trip-floor/", RoundTripFloorView.as_view(), name="bench-round-trip-floor"),
    path("read-model-floor/", ReadModelFloorView.as_view(), name="bench-read-model-floor"),
]

urlpatterns = [path("bench/", include(floors)), *product]
