"""Views of the warehouse UI: the page itself; login and logout are Django's own views."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.urls import reverse
from django.utils.translation import get_language
from django.views.generic import TemplateView

from config.users import signed_in
from web.selectors import message_type_names, warehouse_choices_for


class WarehouseView(LoginRequiredMixin, TemplateView):
    """The warehouse page: bell, unread panel, inbox and chat, all driven by the REST API."""

    template_name = "web/warehouse.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        user = signed_in(self.request)
        warehouses = warehouse_choices_for(user=user)
        context["warehouses"] = warehouses
        # Everything the scripts need arrives in one JSON blob (json_script escapes it), so no
        # user-controlled text is ever pasted into JavaScript source.
        context["ui_config"] = {
            "user": {"id": user.pk, "username": user.get_username()},
            "warehouses": [choice.as_json() for choice in warehouses],
            "defaultWarehouse": next(
                (c.id for c in warehouses if c.code == settings.UI_DEFAULT_WAREHOUSE),
                warehouses[0].id if warehouses else None,
            ),
            "messageTypes": message_type_names(language=get_language()),
            "serviceWorker": reverse("service-worker"),
            "pollIntervalSeconds": settings.UI_POLL_INTERVAL_SECONDS,
            "maxBackoffSeconds": settings.UI_POLL_MAX_BACKOFF_SECONDS,
            "stream": settings.UI_STREAM,
            "streamReconcileSeconds": settings.UI_STREAM_RECONCILE_SECONDS,
            "api": {
                "notifications": "/api/v1/notifications/",
                "chats": "/api/v1/chats/",
                "contacts": "/api/v1/contacts/",
                "stream": "/api/v1/stream/",
                "onShift": reverse("shifts-on-now"),
                "notices": reverse("notices"),
                "mute": reverse("mute"),
            },
            "loginUrl": reverse(settings.LOGIN_URL),
        }
        return context
