"""URLs of the notifications API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("notifications/", views.NotificationListView.as_view(), name="notifications"),
    path("notifications/unread/", views.UnreadView.as_view(), name="notifications-unread"),
    path("notifications/read/", views.MarkReadView.as_view(), name="notifications-read"),
]
