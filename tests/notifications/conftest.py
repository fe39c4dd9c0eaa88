"""Fixtures for notification tests: subscribed users, a publish shortcut, and a process whose
publishes rebuild the subscriber sets (`cold_cache` is in tests/conftest.py: rules use it too)."""

import pytest

from notifications import selectors
from notifications.selectors import inbox_page
from notifications.services import publish
from subscriptions import services as subscription_services
from subscriptions.models import Subscription


@pytest.fixture
def subscribed(warehouse, rep_notice, role, make_user):
    """Rita through the Replenishment role, and Alice directly."""
    rita = make_user("rita", role)
    alice = make_user("alice")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    return rita, alice


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user, client_for):
    """Rita and Ralf of the Replenishment role, by name, and their API clients by name (a module
    that needs another crew defines its own)."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    users = {name: make_user(name, role) for name in ("rita", "ralf")}
    return users, {name: client_for(user) for name, user in users.items()}


@pytest.fixture
def send(warehouse, rep_notice):
    """Publish a REP_NOTICE into SH01 (keyword arguments override the defaults)."""

    def send_one(title: str = "Replenish A-01-03", **kwargs):
        kwargs.setdefault("message_type", rep_notice)
        kwargs.setdefault("warehouse", warehouse)
        return publish(title=title, **kwargs)

    return send_one


@pytest.fixture
def rebuilds(monkeypatch):
    """Count the warehouse rebuilds publishing asks for (they still happen)."""
    calls: list[int] = []
    real = subscription_services.rebuild_warehouse

    def counted(warehouse_id, **options):
        calls.append(warehouse_id)
        return real(warehouse_id, **options)

    monkeypatch.setattr(subscription_services, "rebuild_warehouse", counted)
    return calls


def seen_by(user, warehouse) -> list[str]:
    """The ids in `user`'s inbox in `warehouse`, newest first."""
    return [i.notification.id for i in inbox_page(user=user, warehouse_id=warehouse.pk).items]


def events_of(user, warehouse, note_id) -> list[tuple[str, str | None]]:
    """The alert's history as `user` sees it: (event, who by, or None for the system)."""
    found = selectors.history(user=user, warehouse_id=warehouse.pk, notification_id=note_id)
    assert found is not None
    return [(e.event, e.by.username if e.by else None) for e in found]
