from django.urls import path

from . import views

urlpatterns = [
    path("silences/", views.SilencesView.as_view(), name="silences"),
    path("mute/", views.MuteView.as_view(), name="mute"),
]
