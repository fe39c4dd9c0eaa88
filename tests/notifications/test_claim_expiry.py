"""Claims that expire (SPEC 17): a claim held a type's claim timeout with no progress is let go
by the system."""

import pytest

from config.celery import app
from config.redis import get_redis
from notifications import claims, keys, lifecycle, tasks
from notifications.domain import Actor, Event
from notifications.selectors import unread_summary
from subscriptions.models import Subscription
from tests.notifications.conftest import events_of

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT_MS = 600_000


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user):
    rep_notice.claim_timeout_seconds = TIMEOUT_MS // 1000
    rep_notice.save()
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


def unread(user, warehouse) -> int:
    return unread_summary(user=user, warehouse_id=warehouse.pk).unread_count


def test_a_claim_held_too_long_is_let_go_by_the_system(warehouse, crew, send, clock):
    rita, ralf = crew
    start = 1_900_000_000_000
    clock.stop_at(start)
    note = send()
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (0, 0)

    clock.stop_at(start + TIMEOUT_MS - 1)
    assert tasks.expire_claims() == 0  # not yet
    clock.stop_at(start + TIMEOUT_MS)
    assert tasks.expire_claims() == 1

    item = lifecycle.peek(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)
    assert (item.lifecycle.status, item.lifecycle.claimed_by) == ("open", None)
    assert events_of(ralf, warehouse, note.id) == [
        ("published", None),
        ("claimed", "rita"),
        ("claim_expired", None),
    ]
    # Unread again as after a release: for Ralf, who never read it (Rita read it by claiming).
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (0, 1)
    assert get_redis().zcard(keys.claims(warehouse.pk)) == 0
    assert tasks.expire_claims() == 0  # once


def test_an_action_run_restarts_the_clock(warehouse, crew, send, clock):
    rita, _ = crew
    start = 1_900_000_000_000
    clock.stop_at(start)
    note = send()
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    clock.stop_at(start + 300_000)
    lifecycle.record_event(
        warehouse_id=warehouse.pk,
        notification_id=note.id,
        event=Event.ACTION,
        by=Actor(rita.pk, "rita"),
        extra={"code": "refill"},
    )

    clock.stop_at(start + TIMEOUT_MS)
    assert claims.expire_all() == 0
    item = lifecycle.peek(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    assert item.lifecycle.status == "claimed"
    # Due again a timeout after the run.
    assert get_redis().zscore(keys.claims(warehouse.pk), note.id) == start + 300_000 + TIMEOUT_MS

    clock.stop_at(start + 300_000 + TIMEOUT_MS)
    assert claims.expire_all() == 1


def test_a_resolved_or_released_claim_does_not_expire(warehouse, crew, send, clock):
    rita, _ = crew
    start = 1_900_000_000_000
    clock.stop_at(start)
    resolved, released = send(), send()
    for note in (resolved, released):
        lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=resolved.id)
    lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=released.id)

    clock.stop_at(start + TIMEOUT_MS)
    assert claims.expire_all() == 0
    assert get_redis().zcard(keys.claims(warehouse.pk)) == 0
    assert [e for e, _ in events_of(rita, warehouse, released.id)][-1] == "released"


def test_a_type_without_a_claim_timeout_keeps_its_claims(warehouse, crew, send, clock, rep_notice):
    rep_notice.claim_timeout_seconds = None
    rep_notice.save()
    rita, _ = crew
    note = send()
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    clock.move_by(10 * TIMEOUT_MS)
    assert claims.expire_all() == 0
    assert get_redis().zcard(keys.claims(warehouse.pk)) == 0


def test_beat_lets_go_of_expired_claims_every_few_seconds(settings):
    entry = app.conf.beat_schedule["expire-claims"]
    assert entry["task"] == "notifications.tasks.expire_claims"
    assert entry["schedule"] == settings.CLAIM_EXPIRY_SECONDS <= 30
