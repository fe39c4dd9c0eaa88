"""The product's URLs, plus the floor the polls are measured against (benchmarks only)."""

from django.urls import include, path

from benchmarks.views import FloorView, plain_floor

urlpatterns = [
    path("bench/floor/", FloorView.as_view(), name="bench-floor"),
    path("bench/plain-floor/", plain_floor, name="bench-plain-floor"),
    path("", include("config.urls")),
]
