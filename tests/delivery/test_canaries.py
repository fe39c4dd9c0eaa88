"""The delivery objective (SPEC 16): canaries published to every active warehouse, measured on
the poll and stream paths with Redis's clock, reaching no person, and the status, the API, the
admin page, /metrics, /healthz and the alarm that follow from them."""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.forms import modelform_factory
from rest_framework.test import APIClient

from config.redis import get_redis
from config.redis_async import async_redis
from delivery import canary, keys, selectors, services, store
from delivery.models import Episode
from notifications import reports
from notifications.services import publish
from outbox import services as outbox
from outbox.models import OutboxMessage
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.config.test_health import scrape
from tests.push.conftest import browser_at, push_service, subscribe  # noqa: F401  (fixtures)
from tests.waiting import eventually


def reading(warehouse: Warehouse):
    return dict((w.pk, r) for w, r in selectors.readings())[warehouse.pk]


def window(warehouse: Warehouse) -> store.Window:
    return store.windows([warehouse.pk])[warehouse.pk]


def staff_client(make_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(make_user("stella", is_staff=True))
    return client


def stop_stream_hub() -> None:
    """Stop this process's stream hub, if a test started the stream server here: the stream
    server is gone (its beat stays, as a stopped process's does)."""
    import sys

    asgi = sys.modules.get("config.asgi")
    hub = None if asgi is None else asgi.stream_application.hub
    if hub is not None and hub._loop is not None and hub._loop.is_running():
        asyncio.run_coroutine_threadsafe(hub.aclose(), hub._loop).result(timeout=10)


def serve_streams_here() -> None:
    """Say, as a stream process's hub does, that some process serves streams; and stop the
    hub of this process, so that nothing receives the canaries on the stream path."""
    stop_stream_hub()

    async def beat() -> None:
        client = async_redis()
        try:
            await store.beat_async(client, stale_ms=selectors.STREAM_SERVED_WITHIN_MS)
        finally:
            await client.aclose()

    asyncio.run(beat())


@pytest.mark.django_db
def test_the_migrations_make_the_canary_type_and_its_user_who_cannot_sign_in():
    canary_type = MessageType.objects.get(code="CANARY")
    assert canary_type.internal
    user = User.objects.get(username=canary.USERNAME)
    assert not user.is_active
    assert not user.has_usable_password()


@pytest.mark.django_db
def test_nobody_subscribes_to_the_canary_type(warehouse, role, client):
    with pytest.raises(ValidationError):
        Subscription.objects.create(
            message_type=MessageType.objects.get(code="CANARY"), warehouse=warehouse, role=role
        )
    form = modelform_factory(Subscription, fields=["message_type"])()  # as the admin's
    choices = form.fields["message_type"].queryset  # type: ignore[attr-defined]
    assert "CANARY" not in {t.code for t in choices}


@pytest.mark.django_db
def test_one_canary_per_active_warehouse_and_the_poll_path_records_it(warehouse, other_warehouse):
    closed = Warehouse.objects.create(code="XX09", name="Closed", is_active=False)

    published = services.publish_canaries()

    assert sorted(published) == sorted([warehouse.pk, other_warehouse.pk])
    assert services.poll_canaries({closed.pk: "no-such-canary"}) == 0
    assert services.poll_canaries(published) == 2
    assert services.poll_canaries(published) == 0  # the first read that saw it counts
    for place in (warehouse, other_warehouse):
        [sent] = window(place).canaries
        assert sent.poll_ms is not None
        assert sent.poll_ms >= 0
        assert sent.stream_ms is None
    assert window(closed).canaries == ()


@pytest.mark.django_db
def test_a_canary_reaches_no_person(
    warehouse,
    rep_notice,
    role,
    make_user,
    push_service,  # noqa: F811
    browser_at,  # noqa: F811
    subscribe,  # noqa: F811
    celery_eager,
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita = make_user("rita", role, email="rita@example.com")
    stella = make_user("stella", role, is_staff=True, is_superuser=True)
    subscribe(rita, browser_at("rita-phone"), warehouse)
    MessageType.objects.filter(code="CANARY").update(default_severity="critical")

    services.publish_canaries()
    assert window(warehouse).canaries  # it was published
    publish(message_type=rep_notice, warehouse=warehouse, title="Replenish", severity="critical")

    for user in (rita, stella):
        client = APIClient()
        client.force_authenticate(user)
        listed = client.get(
            "/api/v1/notifications/", {"warehouse": warehouse.pk, "include_read": "true"}
        ).json()["results"]
        assert [n["message_type"] for n in listed] == ["REP_NOTICE"]
        unread = client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()
        assert unread["unread_count"] == 1
        assert sum(unread["by_severity"].values()) == 1
    assert [r.path for r in push_service.received] == ["/push/rita-phone"]  # the alert's only
    assert not OutboxMessage.objects.exists()  # no e-mail
    report = reports.alert_report(days=1)
    assert {row.message_type for row in report.rows} == {"REP_NOTICE"}


@pytest.mark.django_db(transaction=True)
def test_a_canary_reaches_the_stream_processes_hub_and_no_stream(
    open_stream, subscribed, warehouse, rep_notice, settings
):
    settings.STREAM_BEAT_SECONDS = 0.5
    canary.user()  # as the migrations leave it (a transactional test's flush removed it)
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)  # the stream process's hub is subscribed

    published = services.publish_canaries()
    assert eventually(lambda: window(warehouse).canaries[-1].stream_ms is not None)
    alert = publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")

    assert stream.until("notification").id == str(alert.cursor)  # the canary came before
    # The hub says it serves streams every STREAM_BEAT_SECONDS (this test's Redis is new).
    assert eventually(lambda: store.stream_servers(stale_ms=selectors.STREAM_SERVED_WITHIN_MS))
    services.poll_canaries(published)
    assert reading(warehouse).status == "ok"


@pytest.mark.django_db(transaction=True)
def test_a_stopped_stream_server_makes_its_warehouses_late(warehouse, settings):
    settings.CANARY_LATE_SECONDS = 0.2
    serve_streams_here()  # a stream process beat, then stopped: no hub receives the canary
    services.poll_canaries(services.publish_canaries())

    assert eventually(lambda: reading(warehouse).status == "late")
    found = reading(warehouse)
    assert found.stream_seconds() is None
    assert found.poll_seconds() is not None


@pytest.mark.django_db
def test_without_any_stream_process_the_stream_path_is_null_not_late(warehouse, settings):
    settings.CANARY_LATE_SECONDS = 0
    services.poll_canaries(services.publish_canaries())

    found = reading(warehouse)
    assert not found.stream_served
    assert found.status == "ok"


@pytest.mark.django_db
def test_no_canary_for_three_intervals_is_missing(warehouse, settings):
    assert reading(warehouse).status == "missing"  # never published: beat is not running
    settings.CANARY_INTERVAL_SECONDS = 1.0  # missing 3 s after the last canary
    services.poll_canaries(services.publish_canaries())
    assert reading(warehouse).status == "ok"

    assert eventually(lambda: reading(warehouse).status == "missing")


@pytest.mark.django_db
def test_the_api_is_for_staff_and_answers_as_spec_16_says(warehouse, make_user, client):
    services.poll_canaries(services.publish_canaries())
    nobody = APIClient()
    nobody.force_authenticate(make_user("olga"))
    assert nobody.get("/api/v1/delivery/").status_code == 403

    answer = staff_client(make_user).get("/api/v1/delivery/")

    assert answer.status_code == 200
    body = answer.json()
    assert body["objective"] == {"seconds": 2.0, "target": 0.999}
    [row] = body["results"]
    assert row["warehouse"] == {"id": warehouse.pk, "code": "SH01"}
    assert set(row["last"]) == {"at", "stream_seconds", "poll_seconds"}
    assert row["last"]["stream_seconds"] is None
    assert isinstance(row["last"]["poll_seconds"], float)
    assert row["hour"]["canaries"] == 1
    assert row["hour"]["within_objective"] == 1
    assert row["hour"]["p50"] == row["hour"]["p99"] == row["last"]["poll_seconds"]
    assert row["status"] == "ok"


@pytest.mark.django_db
def test_the_admin_page_shows_each_warehouse(warehouse, admin_client):
    services.publish_canaries()

    page = admin_client.get("/admin/delivery/episode/")

    assert page.status_code == 200
    assert b'id="delivery-status"' in page.content
    assert b"SH01" in page.content


@pytest.mark.django_db
def test_metrics_and_healthz_say_what_the_canaries_found(warehouse, client, settings):
    settings.CANARY_LATE_SECONDS = 0
    serve_streams_here()
    services.poll_canaries(services.publish_canaries())

    metrics = scrape(client)
    assert f'wms_delivery_seconds_count{{path="poll",warehouse="{warehouse.pk}"}}' in metrics
    assert eventually(lambda: reading(warehouse).status == "late")
    services.check()
    health = client.get("/healthz").json()
    assert health["status"] == "degraded"
    assert health["degraded"]["delivery"] == "late: SH01"


@pytest.mark.django_db
def test_an_episode_emails_once_and_once_more_on_recovery(warehouse, settings, smtp):
    settings.CANARY_LATE_SECONDS = 0
    settings.DELIVERY_ALARM_AFTER_SECONDS = 0
    settings.DELIVERY_ALARM_EMAILS = ["ops@example.com"]
    serve_streams_here()
    services.poll_canaries(services.publish_canaries())
    assert eventually(lambda: reading(warehouse).status == "late")

    services.check()
    services.check()  # still late: the same episode
    get_redis().delete(keys.stream_servers())  # the stream processes are gone for good: null
    services.check()  # ok again: the recovery
    services.check()

    messages = list(OutboxMessage.objects.order_by("created_at"))
    assert len(messages) == 2
    for message in messages:
        assert outbox.deliver(str(message.pk)) == "succeeded"
    alarm, recovery = smtp.messages
    assert alarm["Subject"] == "Delivery in SH01 is late"
    assert "stream: not arrived" in alarm.get_payload()
    assert recovery["Subject"] == "Delivery in SH01 is back within the objective"
    assert smtp.envelopes == [["ops@example.com"], ["ops@example.com"]]
    [episode] = Episode.objects.all()
    assert episode.alarmed_at is not None
    assert episode.ended_at is not None


@pytest.mark.django_db
def test_the_canary_type_cannot_be_given_an_escalation_in_the_admin(admin_client, role):
    canary_type = MessageType.objects.get(code="CANARY")
    url = f"/admin/subscriptions/messagetype/{canary_type.pk}/change/"

    page = admin_client.get(url)
    assert page.status_code == 200
    assert b'name="escalate_after_seconds"' not in page.content  # shown, not editable
    admin_client.post(url, {"escalate_after_seconds": "1", "escalation_role": role.pk})

    canary_type.refresh_from_db()
    assert canary_type.escalate_after_seconds is None
    assert admin_client.get(f"{url[: -len('change/')]}delete/").status_code == 403
