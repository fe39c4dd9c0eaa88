"""The product's URLs, plus the floor the polls are measured against (benchmarks only)."""

from django.urls import include, path

from benchmarks.views import FloorView

urlpatterns = [
    path("bench/floor/", FloorView.as_view(), name="bench-floor"),
    path("", include("config.urls")),
]
