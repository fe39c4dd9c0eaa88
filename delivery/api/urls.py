"""URLs of the delivery API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [path("delivery/", views.DeliveryView.as_view(), name="delivery")]
