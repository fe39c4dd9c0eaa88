"""URLs of the shifts API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("shifts/on-now/", views.OnNowView.as_view(), name="shifts-on-now"),
]
