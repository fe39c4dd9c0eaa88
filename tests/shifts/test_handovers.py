"""Handovers (SPEC 13): made once at each shift end, with the role's open, claimed, escalated
and resolved alerts; claims of the outgoing shift released by nobody; accepted once."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from django.contrib.auth.models import Group

from config import timestamps
from notifications import lifecycle, selectors
from notifications.domain import Event
from notifications.selectors import inbox_page
from notifications.services import publish
from shifts import cache, handovers
from shifts.models import Handover, Shift
from subscriptions.models import Subscription
from tests.racing import crashed, race

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]

UTC = dt.UTC
DAY_START = dt.datetime(2026, 1, 14, 6, 0, tzinfo=UTC)  # the test warehouse runs on UTC
DAY_END = dt.datetime(2026, 1, 14, 14, 0, tzinfo=UTC)


def ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


@pytest.fixture
def day(warehouse, rep_notice, role, make_user, clock):
    """Replenishment works 06:00-14:00 and receives REP_NOTICE; rita and ralf are in it, and
    nora is also in Late (14:00-22:00), so she stays on at 14:00. Nobody subscribes to
    SHIFT_HANDOVER."""
    clock.stop_at(ms(DAY_START) + 3_600_000)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    late = Group.objects.create(name="Late")
    shift = Shift.objects.create(
        warehouse=warehouse, role=role, name="Day", starts=dt.time(6), ends=dt.time(14)
    )
    Shift.objects.create(
        warehouse=warehouse, role=late, name="Late", starts=dt.time(14), ends=dt.time(22)
    )
    return {
        "shift": shift,
        "rita": make_user("rita", role),
        "ralf": make_user("ralf", role),
        "nora": make_user("nora", role, late),
        "outsider": make_user("olga"),
    }


def send(warehouse, rep_notice, title, **kwargs):
    return publish(
        message_type=rep_notice, warehouse=warehouse, title=title, ttl_seconds=86400, **kwargs
    )


def test_a_shift_end_makes_one_handover_with_the_roles_alerts(
    warehouse, rep_notice, role, day, clock
):
    rita, nora = day["rita"], day["nora"]
    wid = warehouse.pk
    open_one = send(warehouse, rep_notice, "open")
    ritas = send(warehouse, rep_notice, "held by rita")
    noras = send(warehouse, rep_notice, "held by nora")
    done = send(warehouse, rep_notice, "done")
    clock.stop_at(clock.now_ms() + 120_000)  # claimed two minutes after publishing
    lifecycle.claim(user=rita, warehouse_id=wid, notification_id=ritas.id)
    lifecycle.claim(user=nora, warehouse_id=wid, notification_id=noras.id)
    lifecycle.claim(user=rita, warehouse_id=wid, notification_id=done.id)
    lifecycle.resolve(user=rita, warehouse_id=wid, notification_id=done.id)

    clock.stop_at(ms(DAY_END) + 10_000)
    assert handovers.hand_over_due() == 1
    assert handovers.hand_over_due() == 0  # once

    handover = Handover.objects.get()
    assert (handover.starts, handover.ends) == (DAY_START, DAY_END)
    assert handover.role_id == role.pk
    content = handover.content
    assert [a["id"] for a in content["open"]] == [open_one.id]
    assert [a["id"] for a in content["claimed_off_shift"]] == [ritas.id]  # nora stays on
    assert content["claimed_off_shift"][0]["claimed_by"]["username"] == "rita"
    assert [a["id"] for a in content["resolved"]] == [done.id]
    assert content["median_time_to_claim_seconds"] == 120
    assert content["snoozed"] == []
    assert content["released"] == 1
    assert content["counts"] == {
        "open": 1,
        "claimed_off_shift": 1,
        "escalated": 0,
        "resolved": 1,
        "snoozed": 0,
    }

    # Rita's claim went back to open, by nobody; Nora keeps hers.
    events = selectors.history(user=rita, warehouse_id=wid, notification_id=ritas.id)
    assert events is not None
    assert [(e.event, e.by) for e in events][-1] == (Event.RELEASED, None)
    page = {i.notification.id: i for i in inbox_page(user=nora, warehouse_id=wid).items}
    assert page[ritas.id].lifecycle.status == "open"
    assert page[noras.id].lifecycle.status == "claimed"

    # The role receives the handover though it does not subscribe to SHIFT_HANDOVER.
    (note,) = [i for i in page.values() if i.notification.message_type == "SHIFT_HANDOVER"]
    assert note.notification.data == {
        "handover_id": handover.pk,
        "shift": "Day",
        "role": "Replenishment",
        "counts": content["counts"],
    }  # what the page needs to tell it in the reader's language
    assert note.notification.body == (
        "1 alert is still open. 1 alert was claimed by someone going off shift. "
        "0 alerts were escalated during the shift. 0 alerts are snoozed past the change. "
        "1 alert was resolved during the shift. Median time to claim: 2 minutes."
    )
    assert note.notification.id == handover.notification_id
    outsider_page = inbox_page(user=day["outsider"], warehouse_id=wid).items
    assert outsider_page == []


def test_claims_stay_when_the_shift_does_not_release_them(warehouse, rep_notice, day, clock):
    Shift.objects.filter(pk=day["shift"].pk).update(release_claims=False)
    cache.forget()
    held = send(warehouse, rep_notice, "held")
    lifecycle.claim(user=day["rita"], warehouse_id=warehouse.pk, notification_id=held.id)
    clock.stop_at(ms(DAY_END) + 1000)
    assert handovers.hand_over_due() == 1
    handover = Handover.objects.get()
    assert handover.content["released"] == 0
    assert [a["id"] for a in handover.content["claimed_off_shift"]] == [held.id]
    (item,) = [
        i
        for i in inbox_page(user=day["ralf"], warehouse_id=warehouse.pk).items
        if i.notification.id == held.id
    ]
    assert item.lifecycle.status == "claimed"


def test_racing_beats_and_workers_make_it_exactly_once(warehouse, day, clock):
    clock.stop_at(ms(DAY_END) + 1000)
    made, failures = race(4, handovers.hand_over_due)

    # SQLite's shared in-memory test database may refuse a racer ("database table is
    # locked"); such a worker is one that crashed: a tick after its lease finishes what it
    # left, without a second notification.
    assert crashed(failures) == []
    clock.stop_at(ms(DAY_END) + 1000 + int(handovers.LEASE.total_seconds() * 1000) + 1000)
    later = handovers.hand_over_due()
    assert sum(made) + later == 1
    assert Handover.objects.count() == 1
    notes = [
        i
        for i in inbox_page(user=day["rita"], warehouse_id=warehouse.pk).items
        if i.notification.message_type == "SHIFT_HANDOVER"
    ]
    assert len(notes) == 1


def test_a_crashed_worker_is_finished_by_a_later_tick_without_a_second_notification(
    warehouse, day, clock
):
    clock.stop_at(ms(DAY_END) + 1000)
    (shift,) = cache.schedule().of(warehouse.pk, day["shift"].role_id)
    (occurrence,) = [
        o
        for o in handovers.schedule.ended_between(
            shift.times, DAY_END - dt.timedelta(minutes=1), DAY_END
        )
    ]
    first = handovers.hand_over(shift=shift, occurrence=occurrence)
    assert first is not None
    # As if the worker died after publishing, before finishing the row: its lease lapses.
    Handover.objects.filter(pk=first.pk).update(completed_at=None, lease_until=None)
    assert handovers.hand_over_due() == 1
    notes = [
        i
        for i in inbox_page(user=day["rita"], warehouse_id=warehouse.pk).items
        if i.notification.message_type == "SHIFT_HANDOVER"
    ]
    assert len(notes) == 1  # the retry's publish was a replay of the first


def test_the_content_is_read_in_bounded_pages_and_lists_are_capped(
    warehouse, rep_notice, day, clock, settings
):
    settings.SHIFT_HANDOVER_BATCH = 7
    settings.SHIFT_HANDOVER_MAX_ITEMS = 5
    for i in range(30):
        send(warehouse, rep_notice, f"open {i}")
    clock.stop_at(ms(DAY_END) + 1000)
    (shift,) = cache.schedule().of(warehouse.pk, day["shift"].role_id)
    occurrence = handovers.schedule.current(shift.times, DAY_END - dt.timedelta(minutes=1))
    assert occurrence is not None
    reading = handovers.read_inbox(
        warehouse_id=warehouse.pk,
        role_id=shift.role_id,
        occurrence=occurrence,
        outgoing=set(),
        now_ms=timestamps.now_ms(),
    )
    assert reading.pages == math.ceil(30 / 7)
    assert reading.open.count == 30
    assert len(reading.open.items) == 5


def test_handovers_api_list_detail_and_accept_once(warehouse, role, day, clock, client_for):
    clock.stop_at(ms(DAY_END) + 1000)
    handovers.hand_over_due()
    handover = Handover.objects.get()
    rita, ralf, outsider = day["rita"], day["ralf"], day["outsider"]

    listed = client_for(rita).get("/api/v1/handovers/", {"warehouse": warehouse.pk})
    assert listed.status_code == 200
    assert [h["id"] for h in listed.json()["results"]] == [handover.pk]
    assert client_for(rita).get(
        "/api/v1/handovers/", {"warehouse": warehouse.pk, "role": role.pk}
    ).json()["results"][0]["ends"] == ("2026-01-14T14:00:00.000Z")
    assert client_for(outsider).get("/api/v1/handovers/", {"warehouse": warehouse.pk}).json() == {
        "results": []
    }
    assert (
        client_for(outsider)
        .get("/api/v1/handovers/", {"warehouse": warehouse.pk, "role": role.pk})
        .status_code
        == 404
    )

    detail = client_for(ralf).get(f"/api/v1/handovers/{handover.pk}/")
    assert detail.status_code == 200
    assert detail.json()["content"]["snoozed"] == []
    assert detail.json()["accepted_by"] is None
    assert client_for(outsider).get(f"/api/v1/handovers/{handover.pk}/").status_code == 404
    assert client_for(outsider).post(f"/api/v1/handovers/{handover.pk}/accept/").status_code == 404

    clock.stop_at(ms(DAY_END) + 60_000)
    first = client_for(ralf).post(f"/api/v1/handovers/{handover.pk}/accept/")
    assert first.status_code == 200
    assert first.json()["accepted_by"] == {"id": ralf.pk, "username": "ralf"}
    assert first.json()["accepted_at"] == "2026-01-14T14:01:00.000Z"
    second = client_for(rita).post(f"/api/v1/handovers/{handover.pk}/accept/")
    assert second.status_code == 409
    assert second.json()["accepted_by"] == {"id": ralf.pk, "username": "ralf"}
    assert second.json()["accepted_at"] == "2026-01-14T14:01:00.000Z"
    # Accepted is done: its notification is resolved by the one who accepted it.
    (note,) = [
        i
        for i in inbox_page(user=rita, warehouse_id=warehouse.pk).items
        if i.notification.id == handover.notification_id
    ]
    assert note.lifecycle.status == "resolved"
    assert note.lifecycle.resolved_by is not None
    assert note.lifecycle.resolved_by.username == "ralf"
    assert client_for(rita).get("/api/v1/handovers/999999/").status_code == 404


def test_escalated_during_the_shift_is_listed(warehouse, rep_notice, day, clock, make_user):
    supervisors = Group.objects.create(name="Supervisors")
    make_user("sam", supervisors)
    rep_notice.escalate_after_seconds = 60
    rep_notice.escalation_role = supervisors
    rep_notice.save()
    note = send(warehouse, rep_notice, "left alone")
    later = clock.now_ms() + 61_000
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=later) == 1

    clock.stop_at(ms(DAY_END) + 1000)
    assert handovers.hand_over_due() == 1
    content = Handover.objects.get().content
    assert [a["id"] for a in content["escalated"]] == [note.id]
    assert content["escalated"][0]["severity"] == "warning"  # one step up from info
    assert [a["id"] for a in content["open"]] == [note.id]  # still open too


def test_the_alert_report_has_a_per_shift_breakdown(
    warehouse, rep_notice, day, clock, client_for, make_user, client
):
    done = send(warehouse, rep_notice, "done")
    clock.stop_at(clock.now_ms() + 90_000)
    lifecycle.claim(user=day["rita"], warehouse_id=warehouse.pk, notification_id=done.id)
    lifecycle.resolve(user=day["rita"], warehouse_id=warehouse.pk, notification_id=done.id)
    send(warehouse, rep_notice, "left open")
    clock.stop_at(ms(DAY_END) + 1000)
    handovers.hand_over_due()
    handovers.accept(user=day["ralf"], handover_id=Handover.objects.get().pk)

    boss = make_user("boss", is_staff=True, is_superuser=True)
    report = client_for(boss).get("/api/v1/reports/alerts/", {"days": 1}).json()
    assert report["per_shift"] == [
        {
            "warehouse": warehouse.pk,
            "warehouse_code": "SH01",
            "role": "Replenishment",
            "shift": "Day",
            "runs": 1,
            "accepted": 1,
            "open_at_end": 1,
            "claimed_off_shift": 0,
            "released": 0,
            "escalated": 0,
            "resolved": 1,
            "time_to_claim_median": 90.0,
        }
    ]
    client.force_login(boss)
    page = client.get("/admin/notifications/alertreport/", {"days": 1})
    assert page.status_code == 200
    assert 'id="shift-report"' in page.content.decode()


def test_alerts_the_role_snoozed_past_the_change_are_listed(warehouse, rep_notice, day, clock):
    """Rita (going off) snoozed one alert until after the change and another until before it;
    Olga is not in the role: only Rita's snooze past the change is in the handover."""
    wid = warehouse.pk
    past = send(warehouse, rep_notice, "snoozed past the change")
    before = send(warehouse, rep_notice, "snoozed until noon")
    lifecycle.snooze(
        user=day["rita"], warehouse_id=wid, notification_id=past.id, until=ms(DAY_END) + 3_600_000
    )
    lifecycle.snooze(
        user=day["rita"], warehouse_id=wid, notification_id=before.id, until=ms(DAY_END) - 60_000
    )

    clock.stop_at(ms(DAY_END) + 1000)
    assert handovers.hand_over_due() == 1

    content = Handover.objects.get().content
    assert [(a["id"], a["snoozed_by"]["username"]) for a in content["snoozed"]] == [
        (past.id, "rita")
    ]
    assert content["snoozed"][0]["until"] == timestamps.iso_ms(ms(DAY_END) + 3_600_000)
    assert content["counts"]["snoozed"] == 1
