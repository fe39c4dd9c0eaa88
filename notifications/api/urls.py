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
    # Claim, release, resolve: one view, one path each.
    *(
        path(
            f"notifications/<str:notification_id>/{action}/",
            view.as_view(),
            name=f"notification-{action}",
        )
        for action, view in views.LIFECYCLE_VIEWS.items()
    ),
    path("reports/alerts/", views.AlertReportView.as_view(), name="alert-report"),
    path("reports/noise/", views.NoiseReportView.as_view(), name="noise-report"),
    path(
        "notifications/<str:notification_id>/history/",
        views.HistoryView.as_view(),
        name="notification-history",
    ),
]
