"""The read model's counts and pages against a plain model, after every kind of change.

Random interleavings of publishing (to overlapping inboxes: a user directly and through a role,
two roles), reading one by one, "mark all read", claim, release, resolve, re-raise, escalation,
role membership changes, time passing (expiry) and the sweep. After every step each user's
unread count by severity, newest unread, and pages are compared with what a plain model says.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import Group

from config import timestamps
from notifications import keys, lifecycle, selectors, services
from notifications.lifecycle_store import reraise as store_reraise
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db(transaction=True)

LEVELS = ("info", "warning", "critical")


@dataclass
class Note:
    id: str
    slot: int
    inboxes: set[str]
    type_code: str
    level: int
    raise_cursor: int
    expires: int
    created: int
    status: str = "open"
    claimer: int | None = None
    marks: set[int] = field(default_factory=set)
    changed: bool = False
    escalation_done: bool = False


class Model:
    def __init__(self) -> None:
        self.notes: dict[str, Note] = {}
        self.watermarks: dict[int, int] = {}
        self.roles: dict[int, set[int]] = {}

    def inboxes_of(self, user_id: int) -> set[str]:
        return {f"u:{user_id}", *(f"r:{g}" for g in self.roles[user_id])}

    def visible(self, user_id: int, note: Note, now: int) -> bool:
        return note.expires > now and bool(note.inboxes & self.inboxes_of(user_id))

    def read(self, user_id: int, note: Note) -> bool:
        return user_id in note.marks or note.raise_cursor <= self.watermarks.get(user_id, 0)

    def unread(self, user_id: int, now: int) -> list[Note]:
        return [
            n
            for n in self.notes.values()
            if self.visible(user_id, n, now) and n.status == "open" and not self.read(user_id, n)
        ]


@pytest.fixture
def world(warehouse, make_user):
    role_a, role_b, supervisors = (Group.objects.create(name=n) for n in ("A", "B", "Sup"))
    users = [make_user(f"user{i}") for i in range(4)]
    t1 = MessageType.objects.create(code="T1", name="t1", default_ttl_seconds=300)
    t2 = MessageType.objects.create(code="T2", name="t2", default_ttl_seconds=300)
    t3 = MessageType.objects.create(
        code="T3",
        name="t3",
        default_ttl_seconds=300,
        escalate_after_seconds=60,
        escalation_role=supervisors,
    )
    for message_type, who in (
        (t1, {"role": role_a}),
        (t1, {"user": users[0]}),
        (t2, {"role": role_a}),
        (t2, {"role": role_b}),
        (t3, {"user": users[1]}),
        (t3, {"user": users[2]}),
    ):
        Subscription.objects.create(message_type=message_type, warehouse=warehouse, **who)
    return users, [role_a, role_b, supervisors]


@pytest.mark.parametrize("seed", range(1, 7))
def test_counts_and_pages_match_a_plain_model_in_random_interleavings(
    monkeypatch, redis, warehouse, world, seed
):
    users, groups = world
    rng = random.Random(seed)
    clock = [timestamps.now_ms()]
    monkeypatch.setattr(timestamps, "now_ms", lambda: clock[0])
    model = Model()
    for user in users:
        model.roles[user.pk] = set()
    by_id = {user.pk: user for user in users}

    def set_roles(user, wanted: set[int]) -> None:
        user.groups.set([g for g in groups if g.pk in wanted])
        model.roles[user.pk] = set(wanted)

    for user in users:
        set_roles(user, {g.pk for g in groups if rng.random() < 0.5})

    def sequence() -> int:
        return int(redis.get(keys.sequence(warehouse.pk)) or 0)

    def change_cursor(note: Note) -> int:
        return int(float(redis.zscore(keys.changes(warehouse.pk), str(note.slot))))

    def pick_note() -> Note | None:
        return rng.choice(list(model.notes.values())) if model.notes else None

    def step() -> str:
        now = clock[0]
        kind = rng.choice(
            ["publish"] * 5
            + ["mark", "mark", "mark_all", "claim", "release", "resolve", "reraise"]
            + ["escalate", "roles", "time", "sweep"]
        )
        user = rng.choice(users)
        note = pick_note()
        if kind == "publish":
            type_code = rng.choice(["T1", "T2", "T3"])
            level = rng.randrange(3)
            result = services.publish(
                message_type=type_code,
                warehouse=warehouse.pk,
                title="t",
                severity=LEVELS[level],
                ttl_seconds=rng.choice([30, 90, 300]),
            )
            model.notes[result.id] = Note(
                id=result.id,
                slot=result.cursor,
                inboxes=set(result.subscribers),
                type_code=type_code,
                level=level,
                raise_cursor=result.cursor,
                expires=int(redis.zscore(keys.expiry(warehouse.pk), str(result.cursor))),
                created=result.created_at_ms,
            )
        elif kind == "mark" and note is not None:
            ids = [note.id, *(n.id for n in rng.sample(list(model.notes.values()), 1))]
            services.mark_read(user=user, warehouse_id=warehouse.pk, ids=ids)
            for i in dict.fromkeys(ids):
                n = model.notes[i]
                if model.visible(user.pk, n, now) and not model.read(user.pk, n):
                    n.marks.add(user.pk)
        elif kind == "mark_all":
            services.mark_read(user=user, warehouse_id=warehouse.pk, ids=None)
            model.watermarks[user.pk] = sequence()
        elif kind in ("claim", "release", "resolve") and note is not None:
            change = getattr(lifecycle, kind)
            try:
                change(user=user, warehouse_id=warehouse.pk, notification_id=note.id)
            except lifecycle.LifecycleError:
                ok = False
            else:
                ok = True
            visible = model.visible(user.pk, note, now)
            if kind == "claim":
                expect = visible and note.status != "resolved" and note.claimer in (None, user.pk)
                assert ok == expect
                if ok:
                    if note.status != "claimed":
                        note.changed = True
                    note.status, note.claimer = "claimed", user.pk
                    note.marks.add(user.pk)
            elif kind == "release":
                expect = visible and note.status != "resolved" and note.claimer in (None, user.pk)
                assert ok == expect
                if ok and note.status == "claimed":
                    note.status, note.claimer, note.changed = "open", None, True
            else:
                assert ok == visible
                if ok and note.status != "resolved":
                    note.status, note.claimer, note.changed = "resolved", None, True
        elif kind == "reraise" and note is not None:
            answer = store_reraise(warehouse_id=warehouse.pk, notification_id=note.id, now_ms=now)
            if note.expires > now and note.status != "resolved":
                assert answer.changed
                assert answer.item is not None
                note.marks.clear()
                note.raise_cursor = answer.item.cursor
                note.changed = True
            else:
                assert not answer.changed
        elif kind == "escalate":
            lifecycle.escalate_warehouse(warehouse.pk, at_ms=now)
            for n in model.notes.values():
                if n.type_code != "T3" or n.escalation_done or n.created + 60_000 > now:
                    continue
                n.escalation_done = True
                if n.status == "open" and n.expires > now:
                    # More urgent and in more inboxes: unread again for everyone.
                    n.marks.clear()
                    n.inboxes.add(f"r:{groups[2].pk}")
                    n.level = min(n.level + 1, 2)
                    n.raise_cursor = change_cursor(n)
                    n.changed = True
        elif kind == "roles":
            set_roles(user, {g.pk for g in groups if rng.random() < 0.5})
        elif kind == "time":
            clock[0] += rng.randrange(0, 40_000)
        elif kind == "sweep":
            services.expire_warehouse(warehouse.pk, at_ms=now)
            for i in [i for i, n in model.notes.items() if n.expires <= now]:
                del model.notes[i]
        return kind

    history: list[str] = []
    for _ in range(150):
        history.append(step())
        now = clock[0]
        for user in users:
            unread = model.unread(user.pk, now)
            summary = selectors.unread_summary(user=user, warehouse_id=warehouse.pk)
            expected = {level: 0 for level in LEVELS}
            for n in unread:
                expected[LEVELS[n.level]] += 1
            assert summary.by_severity == expected, (" ".join(history), user.username)
            assert summary.unread_count == len(unread)
            newest = sorted(unread, key=lambda n: n.raise_cursor, reverse=True)[:5]
            assert [i.notification.id for i in summary.latest] == [n.id for n in newest]

            page = selectors.inbox_page(
                user=by_id[user.pk],
                warehouse_id=warehouse.pk,
                since=0,
                limit=200,
                include_read=True,
            )
            seen = {n.id: n for n in model.notes.values() if model.visible(user.pk, n, now)}
            assert {i.notification.id for i in page.items} == set(seen), history
            for item in page.items:
                assert item.read == model.read(user.pk, seen[item.notification.id]), history
            assert page.unread_count == len(unread)

            unread_only = selectors.inbox_page(
                user=user, warehouse_id=warehouse.pk, since=0, limit=200
            )
            wanted = {n.id for n in seen.values() if n.changed or not model.read(user.pk, n)}
            assert {i.notification.id for i in unread_only.items} == wanted, history


def test_mark_all_read_of_many_is_a_watermark_not_a_mark_each(
    settings, redis, warehouse, replenishers, send
):
    settings.NOTIFICATION_MARK_ALL_ONE_BY_ONE = 3
    rita, ralf = replenishers
    for i in range(10):
        send(title=f"n{i}")

    result = services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=None)

    assert (result.marked, result.unread_count) == (10, 0)
    assert redis.zcard(keys.read_marks(warehouse.pk, rita.pk)) == 0  # O(1): nothing per item
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
    from django.contrib.auth.models import Group

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

    report = services.expire_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 10_000)

    assert report.read_marks == 60
    assert redis.scard(keys.readers(warehouse.pk)) == 0
    assert all(redis.zcard(keys.read_marks(warehouse.pk, u.pk)) == 0 for u in users)
    for key in (keys.places, keys.markers, keys.read_open, keys.classes):
        assert redis.hlen(key(warehouse.pk)) == 0, key
    assert redis.zcard(keys.open_index(warehouse.pk)) == 0
