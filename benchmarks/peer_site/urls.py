"""The peer's URLs, mounted where its README mounts them."""

from django.urls import include, path

urlpatterns = [
    path("inbox/notifications/", include("notifications.urls", namespace="notifications")),
]
