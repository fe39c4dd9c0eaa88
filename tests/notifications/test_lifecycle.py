"""Claim, release, resolve and history (SPEC section 7): atomic, visible to colleagues at once."""

import threading
from collections import Counter

import pytest

from config import timestamps
from notifications import keys, lifecycle, lifecycle_store, selectors, services
from notifications.domain import Actor, Event
from notifications.selectors import inbox_page, unread_summary
from subscriptions.models import Subscription


def username(actor: Actor | None) -> str | None:
    return None if actor is None else actor.username


pytestmark = pytest.mark.django_db(transaction=True)


def ids_of(items) -> list[str]:
    return [item.notification.id for item in items]


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user):
    """Three operators of the Replenishment role, which receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return [make_user(name, role) for name in ("rita", "ralf", "rosa")]


def claim(user, warehouse, note_id):
    return lifecycle.claim(user=user, warehouse_id=warehouse.pk, notification_id=note_id)


def test_claim_takes_it_out_of_every_colleagues_unread(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 1

    item = claim(rita, warehouse, note.id)

    assert item.lifecycle.status == "claimed"
    assert item.lifecycle.claimed_by == Actor(rita.pk, "rita")
    assert item.lifecycle.claimed_at_ms is not None
    assert item.read  # claiming is reading, for the claimer
    for user in crew:
        summary = unread_summary(user=user, warehouse_id=warehouse.pk)
        assert (summary.unread_count, summary.latest) == (0, [])
        assert summary.by_severity == {"info": 0, "warning": 0, "critical": 0}


def test_every_change_gives_a_new_higher_cursor_seen_without_include_read(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    first = inbox_page(user=ralf, warehouse_id=warehouse.pk)
    (before,) = first.items

    claimed = claim(rita, warehouse, note.id)
    after_claim = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=first.next_since)
    released = lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    after_release = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=after_claim.next_since)
    resolved = lifecycle.resolve(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)
    after_resolve = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=after_release.next_since)
    quiet = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=after_resolve.next_since)

    assert before.cursor < claimed.cursor < released.cursor < resolved.cursor
    assert [(i.notification.id, i.cursor, i.lifecycle.status) for i in after_claim.items] == [
        (note.id, claimed.cursor, "claimed")
    ]
    assert [(i.cursor, i.lifecycle.status) for i in after_release.items] == [
        (released.cursor, "open")
    ]
    assert [(i.cursor, i.lifecycle.status) for i in after_resolve.items] == [
        (resolved.cursor, "resolved")
    ]
    assert after_resolve.next_since == resolved.cursor
    assert quiet.items == []
    assert quiet.next_since == resolved.cursor
    assert after_resolve.unread_count == 0


def test_changed_and_new_ones_come_in_cursor_order(warehouse, crew, send):
    rita, ralf, _ = crew
    old = send(title="old")
    start = inbox_page(user=ralf, warehouse_id=warehouse.pk).next_since
    newer = send(title="newer")
    claimed = claim(rita, warehouse, old.id)
    newest = send(title="newest")

    page = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=start)
    limited = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=start, limit=2)
    rest = inbox_page(user=ralf, warehouse_id=warehouse.pk, since=limited.next_since)

    assert ids_of(page.items) == [newer.id, old.id, newest.id]
    assert [i.cursor for i in page.items] == sorted(i.cursor for i in page.items)
    assert page.items[1].cursor == claimed.cursor
    assert ids_of(limited.items) == [newer.id, old.id]
    assert ids_of(rest.items) == [newest.id]


def test_claim_conflicts_and_idempotence(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    claim(rita, warehouse, note.id)

    again = claim(rita, warehouse, note.id)
    with pytest.raises(lifecycle.AlreadyClaimed) as taken:
        claim(ralf, warehouse, note.id)
    lifecycle.resolve(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)
    with pytest.raises(lifecycle.AlreadyResolved):
        claim(rita, warehouse, note.id)

    assert username(again.lifecycle.claimed_by) == "rita"
    assert taken.value.item is not None
    assert username(taken.value.item.lifecycle.claimed_by) == "rita"


def test_release_only_by_the_claimer(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    claim(rita, warehouse, note.id)

    with pytest.raises(lifecycle.NotClaimer):
        lifecycle.release(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)
    released = lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)

    assert released.lifecycle.status == "open"
    assert released.lifecycle.claimed_by is None
    # Open again: unread for the colleagues who had not read it; read for rita who claimed it.
    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 1
    assert unread_summary(user=rita, warehouse_id=warehouse.pk).unread_count == 0


def test_resolve_is_idempotent_and_keeps_the_first(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()

    first = lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    second = lifecycle.resolve(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)

    assert first.lifecycle.status == second.lifecycle.status == "resolved"
    assert username(second.lifecycle.resolved_by) == "rita"
    assert second.cursor == first.cursor  # nothing changed, so no new cursor
    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 0


def test_others_cannot_see_or_change_it(
    warehouse, other_warehouse, rep_notice, crew, make_user, send
):
    outsider = make_user("otto")
    note = send()

    for change in (lifecycle.claim, lifecycle.release, lifecycle.resolve):
        with pytest.raises(lifecycle.NotVisible):
            change(user=outsider, warehouse_id=warehouse.pk, notification_id=note.id)
        with pytest.raises(lifecycle.NotVisible):  # right user, wrong warehouse
            change(user=crew[0], warehouse_id=other_warehouse.pk, notification_id=note.id)
    assert (
        selectors.history(user=outsider, warehouse_id=warehouse.pk, notification_id=note.id) is None
    )
    assert unread_summary(user=crew[0], warehouse_id=warehouse.pk).unread_count == 1


def test_expired_ones_cannot_be_claimed(warehouse, crew, send, redis):
    note = send(ttl_seconds=1)
    redis.zadd(keys.expiry(warehouse.pk), {str(note.cursor): timestamps.now_ms() - 1})

    with pytest.raises(lifecycle.NotVisible):
        claim(crew[0], warehouse, note.id)


def test_history_lists_every_event_with_who_and_when(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    claim(rita, warehouse, note.id)
    lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    claim(ralf, warehouse, note.id)
    lifecycle.resolve(user=ralf, warehouse_id=warehouse.pk, notification_id=note.id)

    events = selectors.history(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)
    assert events is not None

    assert [(e.event, e.by and e.by.username) for e in events] == [
        ("published", None),
        ("claimed", "rita"),
        ("released", "rita"),
        ("claimed", "ralf"),
        ("resolved", "ralf"),
    ]
    assert events[0].at_ms == note.created_at_ms
    assert [e.at_ms for e in events] == sorted(e.at_ms for e in events)


def test_many_concurrent_claimers_exactly_one_wins_each_time(warehouse, crew, make_user, send):
    role = crew[0].groups.get()
    claimers = [Actor(u.pk, u.username) for u in (make_user(f"op{i}", role) for i in range(12))]
    role_ids = [role.pk]
    notes = [send(title=f"n{i}") for i in range(8)]
    outcomes: list[tuple[str, str, str | None]] = []
    lock = threading.Lock()
    start = threading.Barrier(len(claimers))

    def run(actor: Actor) -> None:
        start.wait()
        for note in notes:
            answer = lifecycle_store.change_by_user(
                "claim",
                warehouse_id=warehouse.pk,
                notification_id=note.id,
                actor=actor,
                role_ids=role_ids,
                now_ms=timestamps.now_ms(),
            )
            with lock:
                outcomes.append(
                    (
                        note.id,
                        answer.outcome,
                        username(answer.item.lifecycle.claimed_by) if answer.item else None,
                    )
                )

    threads = [threading.Thread(target=run, args=(actor,)) for actor in claimers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    wins = Counter(note_id for note_id, outcome, _ in outcomes if outcome == "ok")
    assert wins == Counter({note.id: 1 for note in notes})
    assert len(outcomes) == len(notes) * len(claimers)
    for note in notes:
        holders = {holder for note_id, _, holder in outcomes if note_id == note.id}
        assert len(holders) == 1  # every loser was told the one winner
        assert {o for n, o, _ in outcomes if n == note.id} == {"ok", "taken"}


def test_mark_all_read_then_a_release_keeps_my_read_state(warehouse, crew, send):
    rita, ralf, _ = crew
    note = send()
    services.mark_read(user=ralf, warehouse_id=warehouse.pk, ids=None)
    claim(rita, warehouse, note.id)
    lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=note.id)

    assert unread_summary(user=ralf, warehouse_id=warehouse.pk).unread_count == 0
    assert unread_summary(user=crew[2], warehouse_id=warehouse.pk).unread_count == 1


# --- Escalation ---------------------------------------------------------------------------------


@pytest.fixture
def supervisors(warehouse, rep_notice, make_user):
    """REP_NOTICE escalates to the Supervisors role after 120 s; sam is a supervisor."""
    from django.contrib.auth.models import Group

    group = Group.objects.create(name="Supervisors")
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = group
    rep_notice.save()
    return make_user("sam", group)


def test_an_open_alert_escalates_once_to_the_escalation_role(warehouse, crew, supervisors, send):
    sam = supervisors
    note = send(severity="warning")
    due = note.created_at_ms + 120_000
    start = inbox_page(user=crew[1], warehouse_id=warehouse.pk).next_since
    assert inbox_page(user=sam, warehouse_id=warehouse.pk).items == []

    early = lifecycle.escalate_warehouse(warehouse.pk, at_ms=due - 1)
    first = lifecycle.escalate_warehouse(warehouse.pk, at_ms=due)
    second = lifecycle.escalate_warehouse(warehouse.pk, at_ms=due + 60_000)

    assert (early, first, second) == (0, 1, 0)
    (seen,) = inbox_page(user=sam, warehouse_id=warehouse.pk).items
    assert seen.notification.id == note.id
    assert seen.lifecycle.severity == "critical"  # one step up from warning
    assert seen.lifecycle.escalated_at_ms == due
    assert unread_summary(user=sam, warehouse_id=warehouse.pk).by_severity["critical"] == 1
    # The crew gets it again too, with its new cursor and severity.
    (again,) = inbox_page(user=crew[1], warehouse_id=warehouse.pk, since=start).items
    assert again.cursor == seen.cursor
    assert again.lifecycle.severity == "critical"
    events = selectors.history(user=sam, warehouse_id=warehouse.pk, notification_id=note.id)
    assert events is not None
    assert [(e.event, e.by) for e in events] == [("published", None), ("escalated", None)]


def test_claimed_or_resolved_in_time_is_not_escalated(warehouse, crew, supervisors, send, redis):
    rita = crew[0]
    claimed, resolved, released = send(title="c"), send(title="r"), send(title="x")
    claim(rita, warehouse, claimed.id)
    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=resolved.id)
    claim(rita, warehouse, released.id)
    lifecycle.release(user=rita, warehouse_id=warehouse.pk, notification_id=released.id)

    escalated = lifecycle.escalate_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 121_000)

    assert escalated == 1  # only the one open again at its due time
    assert ids_of(inbox_page(user=supervisors, warehouse_id=warehouse.pk).items) == [released.id]
    assert redis.zcard(keys.escalations(warehouse.pk)) == 0  # nothing left to look at


def test_escalation_works_in_batches_and_exactly_once_under_concurrency(
    warehouse, crew, supervisors, send, settings
):
    settings.NOTIFICATION_ESCALATION_BATCH = 3
    notes = [send(title=f"n{i}") for i in range(10)]
    at = timestamps.now_ms() + 121_000
    counts: list[int] = []

    def run() -> None:
        counts.append(lifecycle.escalate_warehouse(warehouse.pk, at_ms=at))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(counts) == len(notes)
    page = inbox_page(user=supervisors, warehouse_id=warehouse.pk)
    assert sorted(ids_of(page.items)) == sorted(n.id for n in notes)
    for note in notes:
        events = selectors.history(
            user=supervisors, warehouse_id=warehouse.pk, notification_id=note.id
        )
        assert events is not None
        assert [e.event for e in events].count(Event.ESCALATED) == 1


def test_a_type_that_does_not_escalate_is_never_indexed(warehouse, crew, send, redis):
    send()

    assert redis.zcard(keys.escalations(warehouse.pk)) == 0
    assert lifecycle.escalate_all(at_ms=timestamps.now_ms() + 10**9) == 0


def test_the_expiry_sweep_removes_every_lifecycle_key(warehouse, crew, supervisors, send, redis):
    rita = crew[0]
    gone = send(title="gone", ttl_seconds=5)
    kept = send(title="kept")
    for note in (gone, kept):
        claim(rita, warehouse, note.id)
    services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 10_000)

    for key in (keys.flags, keys.states, keys.history):
        assert redis.hkeys(key(warehouse.pk)) == [str(kept.cursor).encode()], key
    for key in (keys.changes, keys.escalations):
        assert redis.zrange(key(warehouse.pk), 0, -1) == [str(kept.cursor).encode()], key


def test_beat_schedules_escalation_at_least_every_30_seconds(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["escalate-notifications"]
    assert entry["task"] == "notifications.tasks.escalate_notifications"
    assert entry["schedule"] <= 30


def test_the_beat_task_escalates_what_is_due(warehouse, crew, supervisors, send, redis):
    from notifications.tasks import escalate_notifications

    note = send()
    redis.zadd(keys.escalations(warehouse.pk), {str(note.cursor): timestamps.now_ms() - 1})

    assert escalate_notifications.apply().get() == 1
    assert ids_of(inbox_page(user=supervisors, warehouse_id=warehouse.pk).items) == [note.id]


def test_the_sweep_also_empties_the_escalation_roles_inbox(
    warehouse, crew, supervisors, send, redis
):
    note = send(ttl_seconds=300)
    lifecycle.escalate_warehouse(warehouse.pk, at_ms=note.created_at_ms + 120_000)
    role_inbox = keys.inbox(warehouse.pk, f"r:{supervisors.groups.get().pk}")
    assert redis.zcard(role_inbox) == 1

    report = services.expire_warehouse(warehouse.pk, at_ms=note.created_at_ms + 301_000)

    assert report.notifications == 1
    assert report.inbox_entries == 2
    assert redis.zcard(role_inbox) == 0
