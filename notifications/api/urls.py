"""URLs of the notifications API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("notifications/", views.NotificationListView.as_view(), name="notifications"),
    path("notifications/unread/", views.UnreadView.as_view(), name="notifications-unread"),
    path("notifications/read/", views.MarkReadView.as_view(), name="notifications-read"),
    path("notifications/snoozed/", views.SnoozedView.as_view(), name="notifications-snoozed"),
    path(
        "notifications/<str:notification_id>/snooze/",
        views.SnoozeView.as_view(),
        name="notification-snooze",
    ),
    path(
        "notifications/<str:notification_id>/claim/",
        views.ClaimView.as_view(),
        name="notification-claim",
    ),
    path(
        "notifications/<str:notification_id>/release/",
        views.ReleaseView.as_view(),
        name="notification-release",
    ),
    path(
        "notifications/<str:notification_id>/resolve/",
        views.ResolveView.as_view(),
        name="notification-resolve",
    ),
    path("reports/alerts/", views.AlertReportView.as_view(), name="alert-report"),
    path(
        "notifications/<str:notification_id>/history/",
        views.HistoryView.as_view(),
        name="notification-history",
    ),
]
