"""URLs of the shifts API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("shifts/on-now/", views.OnNowView.as_view(), name="shifts-on-now"),
    path("handovers/", views.HandoverListView.as_view(), name="handovers"),
    path("handovers/<int:handover_id>/", views.HandoverView.as_view(), name="handover"),
    path(
        "handovers/<int:handover_id>/accept/",
        views.HandoverAcceptView.as_view(),
        name="handover-accept",
    ),
]
