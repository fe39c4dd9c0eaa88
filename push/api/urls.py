"""URLs of the Web Push API, mounted under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("push/key/", views.KeyView.as_view(), name="push-key"),
    path("push/subscriptions/", views.SubscriptionsView.as_view(), name="push-subscriptions"),
    path("push/csrf/", views.CsrfView.as_view(), name="push-csrf"),
]
