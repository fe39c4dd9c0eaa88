"""Web Push and the noise budget (SPEC 17): an alert that came quietly to a user is not pushed to
them; the 7th warning within the hour is quiet, a critical one never is."""

from __future__ import annotations

import pytest

from notifications.services import publish
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_quiet_alert_is_not_pushed_a_critical_one_is(
    warehouse,
    rep_notice,
    role,
    make_user,
    push_service,
    browser_at,
    subscribe,
    celery_eager,
    settings,
    clock,
):
    settings.WEB_PUSH_MIN_SEVERITY = "info"
    clock.stop_at(1_900_000_000_000)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita = make_user("rita", role)
    subscribe(rita, browser_at("rita-phone"), warehouse)

    for i in range(7):
        publish(message_type=rep_notice, warehouse=warehouse, title=f"w{i}", severity="warning")
    assert len(push_service.received) == 6  # the seventh came quietly

    publish(message_type=rep_notice, warehouse=warehouse, title="c", severity="critical")
    assert len(push_service.received) == 7

    settings.NOISE_BUDGET_PER_HOUR = 0
    publish(message_type=rep_notice, warehouse=warehouse, title="w8", severity="warning")
    assert len(push_service.received) == 8
