"""URLs of the alert actions API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path(
        "notifications/<str:notification_id>/actions/",
        views.RunsView.as_view(),
        name="notification-action-runs",
    ),
    path(
        "notifications/<str:notification_id>/actions/<str:code>/",
        views.PressView.as_view(),
        name="notification-action",
    ),
]
