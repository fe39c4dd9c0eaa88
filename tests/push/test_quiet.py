"""Web Push and the quiet floor (SPEC 17): a silenced alert is pushed to nobody, a muted user
is not pushed what is under their floor, and the end of a silence pushes what it held back."""

from __future__ import annotations

import datetime as dt

import pytest

from config import timestamps
from notifications.readmodel import quiet as quiet_store
from notifications.services import publish
from quiet import services as quiet_services
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


def test_a_silenced_alert_is_pushed_only_when_its_silence_ends(
    warehouse, rep_notice, on_their_phones, push_service, celery_eager
):
    silence = quiet_services.silence_create(
        warehouse=warehouse,
        message_types=[rep_notice],
        starts_at=timestamps.now() - dt.timedelta(seconds=1),
        ends_at=timestamps.now() + dt.timedelta(hours=1),
        reason="count",
        include_critical=False,
        created_by=None,
    )
    publish(message_type=rep_notice, warehouse=warehouse, title="w", severity="warning")
    assert push_service.received == []

    quiet_services.wake(warehouse_id=warehouse.pk, silence_id=silence.pk)
    assert sorted(r.path for r in push_service.received) == ["/push/ralf-phone", "/push/rita-phone"]


def test_a_muted_user_is_not_pushed_below_the_floor(
    warehouse, rep_notice, on_their_phones, push_service, celery_eager
):
    _, ralf = on_their_phones
    quiet_store.mute_set(
        warehouse_id=warehouse.pk, user_id=ralf.pk, until_ms=timestamps.now_ms() + 600_000, below=2
    )
    publish(message_type=rep_notice, warehouse=warehouse, title="w", severity="warning")
    assert [r.path for r in push_service.received] == ["/push/rita-phone"]

    publish(message_type=rep_notice, warehouse=warehouse, title="c", severity="critical")
    paths = sorted(r.path for r in push_service.received)
    assert paths == ["/push/ralf-phone", "/push/rita-phone", "/push/rita-phone"]
