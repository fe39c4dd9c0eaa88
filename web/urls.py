"""URLs of the warehouse UI: the page at `/`, its manifest and service worker, login and logout."""

from django.contrib.auth import views as auth_views
from django.urls import path

from web import pwa
from web.views import WarehouseView

urlpatterns = [
    path("", WarehouseView.as_view(), name="warehouse"),
    path("manifest.webmanifest", pwa.manifest, name="manifest"),
    path("sw.js", pwa.service_worker, name="service-worker"),
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
