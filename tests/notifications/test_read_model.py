"""The read model's bounded work: mark all as a watermark, pages that stop early, the sweep.

Its behaviour against an independent reference model, over generated sequences of every kind of
change, is tests/notifications/test_read_model_stateful.py.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from config import timestamps
from notifications import keys, selectors, services
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db(transaction=True)

LEVELS = ("info", "warning", "critical")


def test_mark_all_read_of_many_is_a_watermark_not_a_mark_each(redis, warehouse, replenishers, send):
    rita, ralf = replenishers
    for i in range(10):
        send(title=f"n{i}")

    result = services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=None)

    assert (result.marked, result.unread_count) == (10, 0)
    assert redis.hlen(keys.reads(warehouse.pk)) == 0  # O(1): nothing per item
    assert selectors.unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 10
    later = send(title="later")
    summary = selectors.unread_summary(user=rita, warehouse_id=warehouse.pk)
    assert [i.notification.id for i in summary.latest] == [later.id]
    page = selectors.inbox_page(user=rita, warehouse_id=warehouse.pk, since=0, include_read=True)
    assert [i.read for i in page.items] == [True] * 10 + [False]


def test_a_page_reads_only_as_far_as_it_needs(settings, warehouse, replenishers, send):
    """With many read ones to skip, a page stops after looking at its budget and says how far
    it got; following next_since loses nothing and repeats nothing."""
    settings.NOTIFICATION_POLL_SCAN_BEYOND_PAGE = 5
    rita, _ = replenishers
    sent = [send(title=f"n{i}").id for i in range(30)]
    services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=sent[:20])

    first = selectors.inbox_page(user=rita, warehouse_id=warehouse.pk, since=0, limit=3)
    assert first.items == []
    assert first.next_since > 0
    seen, since = [], 0
    for _ in range(20):
        page = selectors.inbox_page(user=rita, warehouse_id=warehouse.pk, since=since, limit=3)
        seen += [i.notification.id for i in page.items]
        if page.next_since == since:
            break
        since = page.next_since
    assert seen == sent[20:]


def test_the_sweep_prunes_read_marks_in_bounded_calls(settings, redis, warehouse, make_user, send):

    group = Group.objects.create(name="many")
    Subscription.objects.create(
        message_type=MessageType.objects.get(code="REP_NOTICE"), warehouse=warehouse, role=group
    )
    users = [make_user(f"reader{i}", group) for i in range(5)]
    notes = [send(title=f"n{i}", ttl_seconds=5).id for i in range(12)]
    for user in users:
        services.mark_read(user=user, warehouse_id=warehouse.pk, ids=notes)
    settings.NOTIFICATION_SWEEP_OPS_PER_CALL = 7
    settings.NOTIFICATION_SWEEP_BATCH = 2

    # Two hours on: the noise budget's log of raises (classes field "q") keeps only the past hour.
    report = services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 7_200_000)

    assert report.read_marks == 60
    for key in (keys.places, keys.reads, keys.classes):
        assert redis.hlen(key(warehouse.pk)) == 0, key
    assert redis.zcard(keys.open_index(warehouse.pk)) == 0
