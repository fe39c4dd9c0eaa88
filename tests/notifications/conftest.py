"""Fixtures for notification tests: a subscribed role and users, and a publish shortcut."""

import pytest

from notifications.services import publish
from subscriptions.models import Subscription


@pytest.fixture
def replenishers(db, warehouse, rep_notice, role, make_user):
    """Two users of the Replenishment role, which receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


@pytest.fixture
def send(warehouse, rep_notice):
    """Publish a REP_NOTICE into SH01 (keyword arguments override the defaults)."""

    def send_one(title: str = "Replenish A-01-03", **kwargs):
        kwargs.setdefault("message_type", rep_notice)
        kwargs.setdefault("warehouse", warehouse)
        return publish(title=title, **kwargs)

    return send_one
