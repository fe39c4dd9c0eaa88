"""The demo WMS's endpoints (mounted under /inventory/)."""

from django.urls import path

from . import webhooks

urlpatterns = [
    path(
        "webhooks/replenishment-task/",
        webhooks.replenishment_task,
        name="demo-replenishment-task",
    ),
]
