"""What a user sees: union of own and role inboxes, once each, per-user read state, cursors."""

import threading

import pytest

from config import timestamps
from notifications import selectors, services
from notifications.selectors import inbox_page, unread_summary
from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db(transaction=True)


def ids_of(page) -> list[str]:
    return [item.notification.id for item in page.items]


def test_direct_and_role_delivery_counts_once(warehouse, rep_notice, role, make_user, send):
    rita = make_user("rita", role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=rita)

    result = send()
    page = inbox_page(user=rita, warehouse_id=warehouse.pk)

    assert result.recipients == 2
    assert ids_of(page) == [result.id]
    assert page.unread_count == 1


def test_reading_a_role_notification_is_per_user(warehouse, replenishers, send):
    rita, ralf = replenishers
    result = send()

    marked = services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[result.id])

    assert (marked.marked, marked.unread_count) == (1, 0)
    assert inbox_page(user=rita, warehouse_id=warehouse.pk).items == []
    assert ids_of(inbox_page(user=ralf, warehouse_id=warehouse.pk)) == [result.id]
    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 1


def test_marking_read_is_idempotent_and_ignores_foreign_ids(
    warehouse, other_warehouse, rep_notice, replenishers, alice, send
):
    rita, _ = replenishers
    mine = send()
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, user=alice)
    foreign = send(warehouse=other_warehouse)

    first = services.mark_read(
        user=rita,
        warehouse_id=warehouse.pk,
        ids=[mine.id, foreign.id, "00000000-0000-0000-0000-000000000000"],
    )
    again = services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[mine.id])

    assert (first.marked, again.marked) == (1, 0)
    assert inbox_page(user=alice, warehouse_id=other_warehouse.pk).unread_count == 1


def test_mark_all_read(warehouse, replenishers, send):
    rita, ralf = replenishers
    for i in range(3):
        send(title=f"n{i}")

    result = services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=None)

    assert (result.marked, result.unread_count) == (3, 0)
    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 3


def test_include_read_shows_read_ones_flagged(warehouse, replenishers, send):
    rita, _ = replenishers
    first, second = send(title="1"), send(title="2")
    services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[first.id])

    page = inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True)

    assert [(i.notification.id, i.read) for i in page.items] == [
        (first.id, True),
        (second.id, False),
    ]


def test_latest_summaries_are_newest_first_and_at_most_five(warehouse, replenishers, send):
    rita, _ = replenishers
    sent = [send(title=f"n{i}") for i in range(7)]

    summary = unread_summary(user=rita, warehouse_id=warehouse.pk)

    assert summary.unread_count == 7
    assert [i.notification.id for i in summary.latest] == [r.id for r in reversed(sent[-5:])]


def test_cursor_paging_loses_nothing_and_repeats_nothing(warehouse, replenishers, send):
    rita, _ = replenishers
    sent = [send(title=f"n{i}").id for i in range(7)]

    first = inbox_page(user=rita, warehouse_id=warehouse.pk, limit=3)
    second = inbox_page(user=rita, warehouse_id=warehouse.pk, since=first.next_since, limit=3)
    third = inbox_page(user=rita, warehouse_id=warehouse.pk, since=second.next_since, limit=3)
    empty = inbox_page(user=rita, warehouse_id=warehouse.pk, since=third.next_since, limit=3)

    assert ids_of(first) + ids_of(second) + ids_of(third) == sent
    assert empty.items == []
    assert empty.next_since == third.next_since


def test_role_membership_is_read_at_poll_time(warehouse, replenishers, role, make_user, send):
    result = send()
    newcomer = make_user("nina")
    assert inbox_page(user=newcomer, warehouse_id=warehouse.pk).items == []

    newcomer.groups.add(role)

    assert ids_of(inbox_page(user=newcomer, warehouse_id=warehouse.pk)) == [result.id]


def test_users_who_are_not_subscribed_get_an_empty_list(warehouse, replenishers, alice, send):
    send()
    page = inbox_page(user=alice, warehouse_id=warehouse.pk)

    assert (page.items, page.unread_count) == ([], 0)


def test_expired_notifications_are_never_returned_even_before_the_sweep(
    monkeypatch, warehouse, replenishers, send
):
    rita, _ = replenishers
    short = send(title="short", ttl_seconds=5)
    long = send(title="long", ttl_seconds=3600)
    later = timestamps.now_ms() + 10_000
    monkeypatch.setattr(timestamps, "now_ms", lambda: later)

    assert ids_of(inbox_page(user=rita, warehouse_id=warehouse.pk, since=0)) == [long.id]
    summary = unread_summary(user=rita, warehouse_id=warehouse.pk)
    assert (summary.unread_count, [i.notification.id for i in summary.latest]) == (1, [long.id])
    assert services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=[short.id]).marked == 0


def test_without_a_cursor_the_look_back_applies(settings, warehouse, replenishers, send, clock):
    """The look-back starts on a whole minute (selectors.LOOKBACK_STEP_MS), so that a list
    without `since` keeps its ETag for a while."""
    rita, _ = replenishers
    clock.move_by(-120_000)
    send()
    clock.move_by(0)
    settings.NOTIFICATION_LOOKBACK_SECONDS = 0

    assert inbox_page(user=rita, warehouse_id=warehouse.pk).items == []
    assert len(inbox_page(user=rita, warehouse_id=warehouse.pk, since=0).items) == 1


def test_concurrent_publishers_and_a_poller_see_every_id_exactly_once(warehouse, replenishers):
    """4 publishing threads x 100 while another thread polls with the cursor the whole time."""
    rita, _ = replenishers
    published: list[str] = []
    seen: list[str] = []
    done = threading.Event()

    def publisher(n: int) -> None:
        for i in range(100):
            published.append(
                services.publish(
                    message_type="REP_NOTICE", warehouse=warehouse.pk, title=f"{n}-{i}"
                ).id
            )

    def poller() -> None:
        since = 0
        while True:
            finished = done.is_set()  # read before polling: a last poll after publishers end
            page = selectors.inbox_page(user=rita, warehouse_id=warehouse.pk, since=since, limit=37)
            seen.extend(ids_of(page))
            since = page.next_since
            if finished and not page.items:
                return

    poll_thread = threading.Thread(target=poller)
    publishers = [threading.Thread(target=publisher, args=(n,)) for n in range(4)]
    poll_thread.start()
    for thread in publishers:
        thread.start()
    for thread in publishers:
        thread.join()
    done.set()
    poll_thread.join(timeout=60)

    assert len(published) == 400
    assert len(seen) == len(set(seen)) == 400
    assert set(seen) == set(published)
