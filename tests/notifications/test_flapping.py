"""Flapping (SPEC 17): a key that made more than FLAP_MAX alerts within FLAP_WINDOW_SECONDS
raises its latest alert again, quietly, instead of making a new one."""

import pytest

from config.redis import get_redis
from notifications import keys, lifecycle, selectors
from notifications.readmodel.layout import report_day
from notifications.selectors import inbox_page, unread_summary
from notifications.services import mark_read
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW_MS = 900_000


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user, settings):
    settings.FLAP_MAX = 3
    settings.FLAP_WINDOW_SECONDS = WINDOW_MS // 1000
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("rita", role), make_user("ralf", role)


@pytest.fixture
def raise_key(send, clock):
    """raise_key(key, at_ms): publish an alert of `key` at that time (the product's clock)."""

    def raise_one(key: str, at_ms: int, **kwargs):
        clock.stop_at(at_ms)
        return send(title=f"Bin {key} is short", key=key, **kwargs)

    return raise_one


def unread(user, warehouse) -> int:
    return unread_summary(user=user, warehouse_id=warehouse.pk).unread_count


def item_of(user, warehouse, notification_id):
    page = inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True)
    (found,) = [i for i in page.items if i.notification.id == notification_id]
    return found


def test_the_raise_after_flap_max_folds_into_the_latest_quietly(warehouse, crew, raise_key):
    rita, ralf = crew
    start = 1_900_000_000_000
    made = [raise_key("A-01-03", start + i * 60_000) for i in range(3)]
    assert len({r.id for r in made}) == 3
    assert not any(r.flapping for r in made)
    mark_read(user=ralf, warehouse_id=warehouse.pk, ids=None)
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (3, 0)

    folded = raise_key("A-01-03", start + 3 * 60_000)

    assert folded.flapping
    assert folded.id == made[-1].id
    assert folded.recipients == 1  # the role's inbox it is in
    # No new notification, no new unread for anyone.
    assert len(inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True).items) == 3
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (3, 0)
    latest = item_of(ralf, warehouse, made[-1].id)
    assert latest.read
    assert latest.lifecycle.occurrences == 2
    assert latest.lifecycle.flapping
    assert latest.cursor > made[-1].cursor  # a change clients following next_since receive
    events = selectors.history(user=rita, warehouse_id=warehouse.pk, notification_id=folded.id)
    assert events is not None
    assert [(e.event, e.by) for e in events] == [("published", None), ("flapping", None)]
    # Another key of the same type is not held back.
    other = raise_key("B-02-01", start + 4 * 60_000)
    assert not other.flapping
    assert other.id not in {r.id for r in made}
    assert unread(ralf, warehouse) == 1


def test_it_keeps_flapping_until_the_key_was_quiet_for_a_window(warehouse, crew, raise_key):
    rita, _ = crew
    start = 1_900_000_000_000
    made = [raise_key("A-01-03", start + i * 1000) for i in range(3)]
    at = start + 3000
    # A raise every 10 minutes: more than the window after the burst, never quiet for one.
    for _ in range(3):
        assert raise_key("A-01-03", at).flapping
        at += 600_000
    assert item_of(rita, warehouse, made[-1].id).lifecycle.occurrences == 4

    back = raise_key("A-01-03", at - 600_000 + WINDOW_MS)  # quiet for the whole window

    assert not back.flapping
    assert back.id not in {r.id for r in made}
    assert item_of(rita, warehouse, back.id).lifecycle.flapping is False
    assert unread(rita, warehouse) == 4


def test_flapping_raises_are_counted_for_the_reports(warehouse, crew, raise_key, rep_notice):
    start = 1_900_000_000_000
    for i in range(5):
        raise_key("A-01-03", start + i * 1000)
    raise_key("B-02-01", start + 9000)
    redis = get_redis()
    day = report_day(start)
    counts = redis.hgetall(keys.report_counts(warehouse.pk, day))
    assert counts[f"{rep_notice.code}|flapping".encode()] == b"2"
    assert counts[f"{rep_notice.code}|published".encode()] == b"4"
    code = rep_notice.code
    assert redis.zrevrange(keys.report_raised_keys(warehouse.pk, day), 0, 9, withscores=True) == [
        (f"{code}|A-01-03".encode(), 5.0),
        (f"{code}|B-02-01".encode(), 1.0),
    ]
    assert redis.pttl(keys.report_raised_keys(warehouse.pk, day)) > 0
    assert 0 < redis.pttl(keys.flaps(warehouse.pk)) <= WINDOW_MS


def test_a_flapping_raise_of_a_resolved_latest_opens_it_again_without_a_new_unread(
    warehouse, crew, raise_key
):
    rita, ralf = crew
    start = 1_900_000_000_000
    made = [raise_key("A-01-03", start + i * 1000) for i in range(3)]
    mark_read(user=ralf, warehouse_id=warehouse.pk, ids=None)
    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=made[-1].id)
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (2, 0)

    folded = raise_key("A-01-03", start + 3000)

    item = item_of(ralf, warehouse, folded.id)
    assert folded.id == made[-1].id
    assert (item.lifecycle.status, item.lifecycle.resolved_by, item.lifecycle.flapping) == (
        "open",
        None,
        True,
    )
    # The condition is back, so it is open in everyone's list, but nobody is told again: Ralf
    # had read it and still has; Rita never read it, so it is unread for her as it was
    # before it was resolved (no new raise).
    assert item.read
    assert (unread(rita, warehouse), unread(ralf, warehouse)) == (3, 0)


def test_flap_max_zero_never_folds(warehouse, crew, raise_key, settings):
    settings.FLAP_MAX = 0
    start = 1_900_000_000_000
    made = [raise_key("A-01-03", start + i * 1000) for i in range(6)]
    assert len({r.id for r in made}) == 6
    assert not any(r.flapping for r in made)


def test_without_a_key_nothing_flaps(warehouse, crew, send):
    made = [send(title="No key") for _ in range(6)]
    assert len({r.id for r in made}) == 6
    assert not any(r.flapping for r in made)


def test_an_idempotent_retry_of_a_flapping_raise_answers_the_same(warehouse, crew, raise_key):
    rita, _ = crew
    start = 1_900_000_000_000
    made = [raise_key("A-01-03", start + i * 1000) for i in range(3)]
    first = raise_key("A-01-03", start + 3000, idempotency_key="retry-me")
    again = raise_key("A-01-03", start + 4000, idempotency_key="retry-me")
    assert (first.id, again.id) == (made[-1].id, made[-1].id)
    assert again.replayed
    assert again.flapping
    assert item_of(rita, warehouse, first.id).lifecycle.occurrences == 2
