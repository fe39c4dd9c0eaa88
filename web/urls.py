"""URLs of the warehouse UI: the page at `/`, login and logout."""

from django.contrib.auth import views as auth_views
from django.urls import path

from web.views import WarehouseView

urlpatterns = [
    path("", WarehouseView.as_view(), name="warehouse"),
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
