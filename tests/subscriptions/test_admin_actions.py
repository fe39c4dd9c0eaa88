"""Admin actions check the permission of what they change: looking is not changing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission

from inventory.models import Bin
from subscriptions.models import MessageType, Warehouse


def staff_with(client, make_user, *codenames: str):
    user = make_user("clerk", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return client


def act(client, url: str, action: str, *pks: int):
    return client.post(url, {"action": action, "_selected_action": list(pks)}, follow=True)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model", "url", "permission"),
    [
        (Warehouse, "/admin/subscriptions/warehouse/", "warehouse"),
        (MessageType, "/admin/subscriptions/messagetype/", "messagetype"),
    ],
)
def test_viewers_cannot_deactivate_through_actions(
    client, make_user, warehouse, rep_notice, model, url, permission
):
    viewer = staff_with(client, make_user, f"view_{permission}")
    # The row of the fixture (the migrations also make a SHIFT_HANDOVER message type).
    target = model.objects.get(pk=(warehouse if model is Warehouse else rep_notice).pk)
    assert viewer.get(url).status_code == 200  # they may look

    response = act(viewer, url, "deactivate", target.pk)

    assert response.status_code == 200
    assert "Deactivated" not in response.content.decode()
    target.refresh_from_db()
    assert target.is_active


@pytest.mark.django_db
def test_staff_who_may_change_can_deactivate(client, make_user, warehouse):
    editor = staff_with(client, make_user, "view_warehouse", "change_warehouse")

    response = act(editor, "/admin/subscriptions/warehouse/", "deactivate", warehouse.pk)

    assert "Deactivated 1." in response.content.decode()
    warehouse.refresh_from_db()
    assert not warehouse.is_active


@pytest.mark.django_db
def test_viewers_cannot_run_a_pick_wave(client, make_user, warehouse):
    viewer = staff_with(client, make_user, "view_bin")
    bin_ = Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=6)

    act(viewer, "/admin/inventory/bin/", "pick_wave", bin_.pk)

    bin_.refresh_from_db()
    assert bin_.stock == 6


def _action(model_admin: admin.ModelAdmin, action: Any) -> tuple[Any, str]:
    """An entry of ModelAdmin.actions (a function, or the name of a method) and its name."""
    func = getattr(model_admin, action) if isinstance(action, str) else action
    return func, func.__name__


PRODUCT_APPS = {"subscriptions", "notifications", "messaging", "inventory", "web", "demo"}


def test_every_admin_action_of_the_product_declares_the_permission_it_needs():
    missing = [
        f"{type(model_admin).__name__}.{name}"
        for model_admin in admin.site._registry.values()
        if type(model_admin).__module__.split(".")[0] in PRODUCT_APPS
        for action in model_admin.actions or ()
        for func, name in [_action(model_admin, action)]
        if not getattr(func, "allowed_permissions", None)
    ]

    assert missing == []
