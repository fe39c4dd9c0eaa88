"""Snooze (SPEC section 13): per user, until a time; woken by time (beat), DELETE, a re-raise,
an escalation or a release; back unread with a new cursor; history, XML, sweeps."""

from __future__ import annotations

import re
import uuid

import pytest
from defusedxml import ElementTree
from django.contrib.auth.models import Group

from config import timestamps
from config.timestamps import iso_ms
from notifications import cleanup, keys, lifecycle, selectors, services, tasks
from tests.notifications.conftest import events_of

pytestmark = pytest.mark.django_db(transaction=True)

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
HOUR_MS = 3_600_000


def snooze(client, note_id, warehouse, until, **extra):
    return client.post(
        f"/api/v1/notifications/{note_id}/snooze/",
        {"warehouse": warehouse.pk, "until": until},
        format="json",
        **extra,
    )


def wake(client, note_id, warehouse):
    return client.delete(
        f"/api/v1/notifications/{note_id}/snooze/?warehouse={warehouse.pk}", format="json"
    )


def in_an_hour() -> str:
    return iso_ms(timestamps.now_ms() + HOUR_MS)


def unread(client, warehouse) -> dict:
    return client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()


def listed_ids(client, warehouse, **params) -> list[str]:
    answer = client.get("/api/v1/notifications/", {"warehouse": warehouse.pk, **params}).json()
    return [n["id"] for n in answer["results"]]


def test_a_snooze_hides_it_from_me_alone_until_i_wake_it(crew, warehouse, send):
    users, clients = crew
    rita, ralf = clients["rita"], clients["ralf"]
    note, other = send("snoozed", severity="warning"), send("kept")
    start = rita.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()["next_since"]

    answer = snooze(rita, note.id, warehouse, in_an_hour())

    assert answer.status_code == 200
    body = answer.json()
    assert body["id"] == note.id
    assert ISO_MS.match(body["snoozed_until"])
    assert body["read"] is True
    mine, theirs = unread(rita, warehouse), unread(ralf, warehouse)
    assert mine["unread_count"] == 1
    assert mine["by_severity"] == {"info": 1, "warning": 0, "critical": 0}
    assert [n["id"] for n in mine["latest"]] == [other.id]
    assert listed_ids(rita, warehouse) == [other.id]
    assert listed_ids(rita, warehouse, since=start) == []  # a snooze is no change for others
    assert theirs["unread_count"] == 2  # ralf's view is untouched
    assert listed_ids(ralf, warehouse) == [note.id, other.id]
    # My Snoozed list.
    snoozed = rita.get("/api/v1/notifications/snoozed/", {"warehouse": warehouse.pk}).json()
    assert [(n["id"], n["snoozed_until"]) for n in snoozed["results"]] == [
        (note.id, body["snoozed_until"])
    ]
    assert ralf.get("/api/v1/notifications/snoozed/", {"warehouse": warehouse.pk}).json() == {
        "results": []
    }
    # With include_read, it shows with my snooze.
    everything = rita.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true"}
    ).json()["results"]
    assert {n["id"]: n["snoozed_until"] for n in everything} == {
        note.id: body["snoozed_until"],
        other.id: None,
    }

    woken = wake(rita, note.id, warehouse)
    again = wake(rita, note.id, warehouse)

    assert woken.status_code == 200
    assert (woken.json()["snoozed_until"], woken.json()["read"]) == (None, False)
    assert woken.json()["cursor"] > start
    assert again.status_code == 200  # nothing to wake: the same answer
    assert again.json()["cursor"] == woken.json()["cursor"]
    assert unread(rita, warehouse)["unread_count"] == 2
    followed = rita.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "since": start}
    ).json()
    assert [(n["id"], n["read"], n["cursor"]) for n in followed["results"]] == [
        (note.id, False, woken.json()["cursor"])
    ]
    assert events_of(users["rita"], warehouse, note.id) == [
        ("published", None),
        ("snoozed", "rita"),
        ("woke", "rita"),
    ]
    history = rita.get(
        f"/api/v1/notifications/{note.id}/history/", {"warehouse": warehouse.pk}
    ).json()["results"]
    assert history[1]["until"] == body["snoozed_until"]
    assert history[2]["until"] is None


def test_an_unread_one_read_before_the_snooze_comes_back_unread(crew, warehouse, send):
    users, clients = crew
    rita = clients["rita"]
    note = send()
    services.mark_read(user=users["rita"], warehouse_id=warehouse.pk, ids=[note.id])
    assert unread(rita, warehouse)["unread_count"] == 0

    snooze(rita, note.id, warehouse, in_an_hour())
    assert unread(rita, warehouse)["unread_count"] == 0
    woken = wake(rita, note.id, warehouse).json()

    assert woken["read"] is False
    assert unread(rita, warehouse)["unread_count"] == 1


@pytest.mark.parametrize(
    ("until", "fragment"),
    [
        ("yesterday", "ISO 8601"),
        ("2026-11-21T08:15:00", "ISO 8601"),  # no zone
        ("2000-01-01T00:00:00Z", "future"),
        ("2999-01-01T00:00:00Z", "at most"),
        ("next_shift", "shift"),  # no shift of rita's roles in this warehouse
    ],
)
def test_bad_times_are_400(crew, warehouse, send, until, fragment):
    _, clients = crew
    note = send()

    answer = snooze(clients["rita"], note.id, warehouse, until)

    assert answer.status_code == 400
    assert fragment in str(answer.json())
    assert unread(clients["rita"], warehouse)["unread_count"] == 1  # nothing written


def test_the_longest_snooze_is_a_setting(crew, warehouse, send, settings):
    _, clients = crew
    settings.NOTIFICATION_SNOOZE_MAX_SECONDS = 600
    note = send()

    too_long = snooze(clients["rita"], note.id, warehouse, in_an_hour())
    fine = snooze(clients["rita"], note.id, warehouse, iso_ms(timestamps.now_ms() + 500_000))

    assert too_long.status_code == 400
    assert fine.status_code == 200


def test_not_mine_or_unknown_is_404_and_resolved_is_409(
    crew, warehouse, send, make_user, client_for
):
    users, clients = crew
    outsider = client_for(make_user("olga"))
    note = send()

    assert snooze(outsider, note.id, warehouse, in_an_hour()).status_code == 404
    assert wake(outsider, note.id, warehouse).status_code == 404
    assert snooze(clients["rita"], uuid.uuid4(), warehouse, in_an_hour()).status_code == 404
    lifecycle.resolve(user=users["ralf"], warehouse_id=warehouse.pk, notification_id=note.id)
    resolved = snooze(clients["rita"], note.id, warehouse, in_an_hour())
    assert resolved.status_code == 409
    assert resolved.json()["detail"] == "Already resolved."


def test_a_claimed_one_can_be_snoozed_and_its_release_wakes_it(crew, warehouse, send):
    users, clients = crew
    note = send()
    lifecycle.claim(user=users["ralf"], warehouse_id=warehouse.pk, notification_id=note.id)
    assert snooze(clients["rita"], note.id, warehouse, in_an_hour()).status_code == 200
    assert unread(clients["rita"], warehouse)["unread_count"] == 0

    released = lifecycle.release(
        user=users["ralf"], warehouse_id=warehouse.pk, notification_id=note.id
    )

    assert released.lifecycle.status == "open"
    assert unread(clients["rita"], warehouse)["unread_count"] == 1
    assert unread(clients["ralf"], warehouse)["unread_count"] == 0  # ralf read it by claiming
    assert selectors.snoozed(user=users["rita"], warehouse_id=warehouse.pk) == []
    assert events_of(users["rita"], warehouse, note.id)[-2:] == [
        ("released", "ralf"),
        ("woke", None),
    ]


def test_a_reraise_wakes_it_at_once(crew, warehouse, send, redis):
    users, clients = crew
    note = send()
    snooze(clients["rita"], note.id, warehouse, in_an_hour())
    snooze(clients["ralf"], note.id, warehouse, in_an_hour())

    answer = lifecycle.reraise(warehouse_id=warehouse.pk, notification_id=note.id)

    assert answer is not None
    for name in ("rita", "ralf"):
        assert unread(clients[name], warehouse)["unread_count"] == 1
    assert events_of(users["rita"], warehouse, note.id)[-3:] == [
        ("reraised", None),
        ("woke", None),
        ("woke", None),
    ]
    assert redis.zcard(keys.snoozes(warehouse.pk)) == 0
    assert snoozed_fields(redis, warehouse) == []


def snoozed_fields(redis, warehouse) -> list[str]:
    """The users hash's "s:<user id>" fields (what each user snoozed)."""
    return sorted(f.decode() for f in redis.hkeys(keys.users(warehouse.pk)) if f.startswith(b"s:"))


def test_an_escalation_wakes_it_at_once(crew, warehouse, send, rep_notice, make_user):
    users, clients = crew
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = Group.objects.create(name="Supervisors")
    rep_notice.save()
    note = send()
    snooze(clients["rita"], note.id, warehouse, in_an_hour())

    escalated = lifecycle.escalate_warehouse(warehouse.pk, at_ms=note.created_at_ms + 120_000)

    assert escalated == 1
    summary = unread(clients["rita"], warehouse)
    assert summary["unread_count"] == 1
    assert summary["by_severity"]["warning"] == 1  # one step up
    assert events_of(users["rita"], warehouse, note.id)[-2:] == [
        ("escalated", None),
        ("woke", None),
    ]


def test_claiming_what_i_snoozed_ends_my_snooze(crew, warehouse, send):
    users, clients = crew
    note = send()
    snooze(clients["rita"], note.id, warehouse, in_an_hour())

    claimed = lifecycle.claim(
        user=users["rita"], warehouse_id=warehouse.pk, notification_id=note.id
    )

    assert (claimed.snoozed_until_ms, claimed.read) == (None, True)
    assert selectors.snoozed(user=users["rita"], warehouse_id=warehouse.pk) == []


def test_beat_wakes_due_snoozes_in_batches_with_a_new_cursor(
    crew, warehouse, send, clock, settings, redis
):
    users, clients = crew
    settings.NOTIFICATION_SNOOZE_BATCH = 2
    notes = [send(f"n{i}") for i in range(5)]
    start = clients["rita"].get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()
    clock.move_by(0)
    now = timestamps.now_ms()
    for i, note in enumerate(notes):
        snooze(clients["rita"], note.id, warehouse, iso_ms(now + 60_000 + i * 10_000))
    later = snooze(clients["ralf"], notes[0].id, warehouse, in_an_hour())
    assert later.status_code == 200
    assert unread(clients["rita"], warehouse)["unread_count"] == 0

    clock.move_by(59_000)
    assert tasks.wake_snoozed_notifications() == 0
    clock.move_by(85_000)  # the first three are due
    assert tasks.wake_snoozed_notifications() == 3
    assert tasks.wake_snoozed_notifications() == 0  # each wakes once

    assert unread(clients["rita"], warehouse)["unread_count"] == 3
    assert unread(clients["ralf"], warehouse)["unread_count"] == 4  # his own snooze holds
    followed = (
        clients["rita"]
        .get("/api/v1/notifications/", {"warehouse": warehouse.pk, "since": start["next_since"]})
        .json()
    )
    assert [n["id"] for n in followed["results"]] == [n.id for n in notes[:3]]
    assert all(n["read"] is False and n["snoozed_until"] is None for n in followed["results"])
    assert events_of(users["rita"], warehouse, notes[0].id)[-1] == ("woke", None)
    assert redis.zcard(keys.snoozes(warehouse.pk)) == 3  # rita's two, ralf's one


def test_beat_runs_the_wake_task_at_least_every_15_seconds(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["wake-snoozed-notifications"]
    assert entry["task"] == "notifications.tasks.wake_snoozed_notifications"
    assert entry["schedule"] <= 15


def test_the_expiry_sweep_leaves_no_snooze_behind(crew, warehouse, send, clock, redis):
    _, clients = crew
    note = send(ttl_seconds=60)
    snooze(clients["rita"], note.id, warehouse, in_an_hour())
    snooze(clients["ralf"], note.id, warehouse, in_an_hour())

    services.expire_all(at_ms=timestamps.now_ms() + 61_000)

    assert redis.zcard(keys.snoozes(warehouse.pk)) == 0
    assert snoozed_fields(redis, warehouse) == []
    assert redis.hlen(keys.reads(warehouse.pk)) == 0


def test_a_deleted_users_snoozes_are_forgotten(crew, warehouse, send, redis):
    users, clients = crew
    note, kept = send("a"), send("b")
    snooze(clients["rita"], note.id, warehouse, in_an_hour())
    snooze(clients["ralf"], kept.id, warehouse, in_an_hour())

    cleanup.user_forget(users["rita"].pk)

    assert [m.decode() for m in redis.zrange(keys.snoozes(warehouse.pk), 0, -1)] == [
        f"{users['ralf'].pk}:{kept.cursor}"
    ]
    assert snoozed_fields(redis, warehouse) == [f"s:{users['ralf'].pk}"]


def test_snoozed_past_lists_what_sleeps_through_a_shift_change(crew, warehouse, send):
    users, clients = crew
    now = timestamps.now_ms()
    short, long_, resolved = send("short", severity="critical"), send("long"), send("gone")
    snooze(clients["rita"], short.id, warehouse, iso_ms(now + 10 * 60_000))
    snooze(clients["ralf"], long_.id, warehouse, iso_ms(now + 5 * HOUR_MS))
    snooze(clients["rita"], long_.id, warehouse, iso_ms(now + 6 * HOUR_MS))
    snooze(clients["rita"], resolved.id, warehouse, iso_ms(now + 6 * HOUR_MS))
    lifecycle.resolve(user=users["ralf"], warehouse_id=warehouse.pk, notification_id=resolved.id)

    past = selectors.snoozed_past(warehouse_id=warehouse.pk, at_ms=now + HOUR_MS, limit=10)
    first = selectors.snoozed_past(warehouse_id=warehouse.pk, at_ms=now + HOUR_MS, limit=1)
    everything = selectors.snoozed_past(warehouse_id=warehouse.pk, at_ms=now, limit=10)

    assert [(s.id, s.title, s.user_id, s.until_ms) for s in past] == [
        (long_.id, "long", users["ralf"].pk, now + 5 * HOUR_MS),
        (long_.id, "long", users["rita"].pk, now + 6 * HOUR_MS),
    ]
    assert [s.user_id for s in first] == [users["ralf"].pk]
    assert (everything[0].id, everything[0].severity, everything[0].status) == (
        short.id,
        "critical",
        "open",
    )


def test_snooze_answers_in_xml(crew, warehouse, send):
    _, clients = crew
    note = send()

    answer = snooze(
        clients["rita"], note.id, warehouse, in_an_hour(), HTTP_ACCEPT="application/xml"
    )
    listed = clients["rita"].get(
        "/api/v1/notifications/",
        {"warehouse": warehouse.pk, "include_read": "true"},
        HTTP_ACCEPT="application/xml",
    )

    assert answer.status_code == 200
    snoozed_until = ElementTree.fromstring(answer.content).findtext("snoozed_until") or ""
    assert ISO_MS.match(snoozed_until)
    results = ElementTree.fromstring(listed.content).find("results")
    assert results is not None
    (item,) = results.findall("list-item")
    assert item.findtext("snoozed_until") == snoozed_until


def test_the_schema_documents_snoozed_until_and_the_endpoints(client, alice):
    client.force_login(alice)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "snoozed_until" in schema["components"]["schemas"]["NotificationOutput"]["properties"]
    assert "/api/v1/notifications/{notification_id}/snooze/" in schema["paths"]
    assert set(schema["paths"]["/api/v1/notifications/{notification_id}/snooze/"]) >= {
        "post",
        "delete",
    }


def test_next_shift_is_the_next_start_of_a_shift_of_my_roles(crew, warehouse, role, send, clock):
    import datetime as dt

    from shifts import cache as shift_cache
    from shifts.models import Shift

    shift_cache.forget()
    warehouse.timezone = "Europe/Berlin"
    warehouse.save()
    Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name="Night",
        starts=dt.time(22, 0),
        ends=dt.time(6, 0),
        weekdays=[],
    )
    # A Wednesday in winter, noon in Berlin (UTC+1): the night shift starts at 21:00 UTC.
    noon = dt.datetime(2026, 1, 14, 11, 0, tzinfo=dt.UTC)
    clock.stop_at(int(noon.timestamp() * 1000))
    _, clients = crew
    note = send()

    answer = snooze(clients["rita"], note.id, warehouse, "next_shift")

    assert answer.status_code == 200, answer.json()
    assert answer.json()["snoozed_until"] == "2026-01-14T21:00:00.000Z"
    assert unread(clients["rita"], warehouse)["unread_count"] == 0
    shift_cache.forget()
