"""URLs of the notices API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("notices/", views.NoticeListView.as_view(), name="notices"),
    path("notices/<int:notice_id>/", views.NoticeView.as_view(), name="notice"),
    path("notices/<int:notice_id>/ack/", views.NoticeAckView.as_view(), name="notice-ack"),
    path("notices/<int:notice_id>/roster/", views.NoticeRosterView.as_view(), name="notice-roster"),
]
