"""Planned silences and mutes (SPEC 17): the API, the read model's rules, the wake in bounded
batches, and who is told loudly (lua/attention.lua)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from config import timestamps
from notifications import keys, lifecycle, selectors, services
from notifications.readmodel import quiet as quiet_store
from quiet import services as quiet_services
from quiet.models import Silence
from subscriptions.models import Subscription


def told_of(warehouse_id: int, notification_id: str, user_ids: list[int]) -> set[int]:
    """Whom the read model's one rule says to tell loudly, of these users (as pushes ask)."""
    users = list(get_user_model().objects.filter(pk__in=user_ids))
    return selectors.users_to_tell(
        warehouse_id=warehouse_id, notification_id=notification_id, users=users
    )


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def crew(warehouse, rep_notice, role, make_user, client_for):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    users = {name: make_user(name, role) for name in ("rita", "ralf")}
    users["rita"].user_permissions.add(Permission.objects.get(codename="add_silence"))
    return users, {name: client_for(user) for name, user in users.items()}


def iso(delta_seconds: float) -> str:
    return (timestamps.now() + dt.timedelta(seconds=delta_seconds)).isoformat()


def silence_now(warehouse, *types, include_critical=False, seconds=3600) -> Silence:
    return quiet_services.silence_create(
        warehouse=warehouse,
        message_types=types,
        starts_at=timestamps.now() - dt.timedelta(seconds=1),
        ends_at=timestamps.now() + dt.timedelta(seconds=seconds),
        reason="Stock count",
        include_critical=include_critical,
        created_by=None,
    )


def unread(client, warehouse) -> dict:
    return client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()


def listed(client, warehouse, **params) -> list[dict]:
    answer = client.get("/api/v1/notifications/", {"warehouse": warehouse.pk, **params})
    return answer.json()["results"]


# --- API ---------------------------------------------------------------------------------------


def test_planning_a_silence_needs_the_permission_and_membership(
    crew, warehouse, other_warehouse, make_user, client_for
):
    _, clients = crew
    body = {"warehouse": warehouse.pk, "starts_at": iso(0), "ends_at": iso(600), "reason": "x"}
    assert clients["ralf"].post("/api/v1/silences/", body, format="json").status_code == 403
    made = clients["rita"].post("/api/v1/silences/", body, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["include_critical"] is False
    assert made.json()["message_types"] == []
    elsewhere = {**body, "warehouse": other_warehouse.pk}
    assert clients["rita"].post("/api/v1/silences/", elsewhere, format="json").status_code == 404
    listing = clients["ralf"].get("/api/v1/silences/", {"warehouse": warehouse.pk}).json()
    assert [s["id"] for s in listing["results"]] == [made.json()["id"]]
    stranger = client_for(make_user("sam"))
    assert stranger.get("/api/v1/silences/", {"warehouse": warehouse.pk}).status_code == 404


def test_a_silence_that_ends_before_it_starts_is_a_json_400(crew, warehouse):
    _, clients = crew
    body = {"warehouse": warehouse.pk, "starts_at": iso(600), "ends_at": iso(0), "reason": "x"}
    answer = clients["rita"].post("/api/v1/silences/", body, format="json")
    assert answer.status_code == 400
    assert "ends_at" in answer.json()
    bad_type = {**body, "ends_at": iso(900), "message_types": ["NOPE"]}
    assert clients["rita"].post("/api/v1/silences/", bad_type, format="json").status_code == 400


def test_mute_api_bounds_and_null(crew, warehouse):
    _, clients = crew
    client = clients["ralf"]
    assert client.get("/api/v1/mute/", {"warehouse": warehouse.pk}).json() == {"mute": None}
    too_long = {"warehouse": warehouse.pk, "until": iso(13 * 3600)}
    assert client.put("/api/v1/mute/", too_long, format="json").status_code == 400
    bad_floor = {"warehouse": warehouse.pk, "until": iso(600), "below": "info"}
    assert client.put("/api/v1/mute/", bad_floor, format="json").status_code == 400
    made = client.put(
        "/api/v1/mute/", {"warehouse": warehouse.pk, "until": iso(600)}, format="json"
    )
    assert made.status_code == 200
    assert made.json()["mute"]["below"] == "critical"
    shown = client.get("/api/v1/mute/", {"warehouse": warehouse.pk}).json()["mute"]
    assert shown["below"] == "critical"
    assert client.delete(f"/api/v1/mute/?warehouse={warehouse.pk}").json() == {"mute": None}
    assert client.get("/api/v1/mute/", {"warehouse": warehouse.pk}).json() == {"mute": None}


# --- The read model ----------------------------------------------------------------------------


def test_a_silenced_alert_is_listed_but_unread_for_nobody_and_wakes_once(
    crew, warehouse, rep_notice
):
    users, clients = crew
    silence = silence_now(warehouse, rep_notice)
    held = services.publish(message_type=rep_notice, warehouse=warehouse, title="Held")
    for client in clients.values():
        assert unread(client, warehouse)["unread_count"] == 0
    items = listed(clients["ralf"], warehouse, include_read="true")
    assert [(n["id"], n["silenced"]) for n in items] == [(held.id, True)]
    events = selectors.history(
        user=users["ralf"], warehouse_id=warehouse.pk, notification_id=held.id
    )
    assert events is not None
    assert [e.event for e in events][-1] == "silenced"
    # Told loudly: nobody.
    ids = [u.pk for u in users.values()]
    assert told_of(warehouse.pk, held.id, ids) == set()

    assert quiet_services.wake(warehouse_id=warehouse.pk, silence_id=silence.pk) == 1
    for client in clients.values():
        summary = unread(client, warehouse)
        assert summary["unread_count"] == 1
        assert summary["latest"][0]["silenced"] is False
    assert quiet_services.wake(warehouse_id=warehouse.pk, silence_id=silence.pk) == 0  # once
    assert told_of(warehouse.pk, held.id, ids) == set(ids)


def test_a_silence_holds_back_no_critical_alert_unless_it_says_so(crew, warehouse, rep_notice):
    _, clients = crew
    silence_now(warehouse)
    services.publish(
        message_type=rep_notice, warehouse=warehouse, title="Fire", severity="critical"
    )
    services.publish(message_type=rep_notice, warehouse=warehouse, title="Low", severity="warning")
    assert unread(clients["rita"], warehouse)["by_severity"] == {
        "info": 0,
        "warning": 0,
        "critical": 1,
    }


def test_a_silenced_alert_is_not_escalated_and_the_report_counts_it(
    crew, warehouse, rep_notice, redis
):
    rep_notice.escalate_after_seconds = 1
    rep_notice.save()
    silence_now(warehouse)
    held = services.publish(message_type=rep_notice, warehouse=warehouse, title="Held")
    slot = redis.hget(keys.ids(warehouse.pk), held.id)
    assert redis.zscore(keys.escalations(warehouse.pk), slot) is None
    report = redis.hgetall(keys.report_counts(warehouse.pk, timestamps.now_ms() // 86_400_000))
    assert report[b"REP_NOTICE|silenced"] == b"1"


def test_a_raise_again_under_a_silence_holds_it_back(crew, warehouse, rep_notice):
    _, clients = crew
    first = services.publish(message_type=rep_notice, warehouse=warehouse, title="Again")
    assert unread(clients["rita"], warehouse)["unread_count"] == 1
    silence_now(warehouse, rep_notice)
    assert lifecycle.reraise(warehouse_id=warehouse.pk, notification_id=first.id) is not None
    assert unread(clients["rita"], warehouse)["unread_count"] == 0


def test_a_silence_made_in_another_process_reaches_the_next_publish(
    crew, warehouse, rep_notice, tmp_path
):
    from tests import another_process

    _, clients = crew
    services.publish(message_type=rep_notice, warehouse=warehouse, title="Before")  # holds
    another_process.run(
        f"""
        import datetime as dt
        from django.utils import timezone
        from quiet.models import Silence
        Silence.objects.create(
            warehouse_id={warehouse.pk}, reason="count",
            starts_at=timezone.now() - dt.timedelta(seconds=5),
            ends_at=timezone.now() + dt.timedelta(hours=1),
        )
        """,
        tmp_path,
    )
    services.publish(message_type=rep_notice, warehouse=warehouse, title="After")
    assert unread(clients["rita"], warehouse)["unread_count"] == 1  # only "Before"


def test_a_mute_hides_what_is_below_its_floor_and_critical_gets_through(
    crew, warehouse, rep_notice
):
    users, clients = crew
    info = services.publish(message_type=rep_notice, warehouse=warehouse, title="Info")
    warning = services.publish(
        message_type=rep_notice, warehouse=warehouse, title="Warn", severity="warning"
    )
    critical = services.publish(
        message_type=rep_notice, warehouse=warehouse, title="Fire", severity="critical"
    )
    client = clients["ralf"]
    body = {"warehouse": warehouse.pk, "until": iso(600), "below": "critical"}
    assert client.put("/api/v1/mute/", body, format="json").status_code == 200
    summary = unread(client, warehouse)
    assert summary["by_severity"] == {"info": 0, "warning": 0, "critical": 1}
    assert [n["id"] for n in summary["latest"]] == [critical.id]
    assert unread(clients["rita"], warehouse)["unread_count"] == 3  # for ralf alone
    ralf, rita = users["ralf"].pk, users["rita"].pk
    for note in (info, warning):
        assert told_of(warehouse.pk, note.id, [ralf, rita]) == {rita}
    assert told_of(warehouse.pk, critical.id, [ralf]) == {ralf}
    body["below"] = "warning"
    client.put("/api/v1/mute/", body, format="json")
    assert unread(client, warehouse)["by_severity"] == {"info": 0, "warning": 1, "critical": 1}
    client.delete(f"/api/v1/mute/?warehouse={warehouse.pk}")
    assert unread(client, warehouse)["unread_count"] == 3


def test_ten_thousand_silenced_alerts_wake_in_bounded_batches(
    crew, warehouse, rep_notice, settings, monkeypatch
):
    _, clients = crew
    silence = silence_now(warehouse, rep_notice)
    total = 10_000
    for i in range(total):
        services.publish(message_type=rep_notice, warehouse=warehouse, title=f"Held {i}")
    assert unread(clients["rita"], warehouse)["unread_count"] == 0
    settings.SILENCE_WAKE_BATCH = 500
    calls: list[int] = []
    durations: list[float] = []
    real = quiet_store.unsilence

    def counted(**kwargs):
        import time

        started = time.perf_counter()
        found = real(**kwargs)
        durations.append(time.perf_counter() - started)
        calls.append(found.taken)
        return found

    monkeypatch.setattr(quiet_store, "unsilence", counted)
    assert quiet_services.wake(warehouse_id=warehouse.pk, silence_id=silence.pk) == total
    assert len(calls) == total // 500
    assert max(calls) <= 500
    assert unread(clients["rita"], warehouse)["unread_count"] == total


def test_a_mute_that_ends_on_its_own_changes_the_etag(crew, warehouse, rep_notice, clock):
    """A client polling with If-None-Match gets the counts back once the mute has ended by
    itself: the mute's end is part of what the user's ETag depends on."""
    _, clients = crew
    client = clients["ralf"]
    services.publish(message_type=rep_notice, warehouse=warehouse, title="Warn", severity="warning")
    params = {"warehouse": warehouse.pk}
    for path in ("/api/v1/notifications/unread/", "/api/v1/notifications/"):
        clock.move_by(0)
        body = {"warehouse": warehouse.pk, "until": iso(600), "below": "critical"}
        assert client.put("/api/v1/mute/", body, format="json").status_code == 200
        muted = client.get(path, params)
        assert muted.json()["unread_count"] == 0
        etag = muted["ETag"]
        assert client.get(path, params, HTTP_IF_NONE_MATCH=etag).status_code == 304

        clock.move_by(601_000)

        ended = client.get(path, params, HTTP_IF_NONE_MATCH=etag)
        assert ended.status_code == 200, path
        assert ended.json()["unread_count"] == 1
