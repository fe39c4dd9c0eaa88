"""Delivery of Web Push (SPEC 12): encrypted pushes reach a real HTTPS push service stand-in,
are decrypted as a browser would, and failures are retried, counted or end the subscription."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Group
from kombu.exceptions import OperationalError
from prometheus_client import REGISTRY
from py_vapid import Vapid

from config import timestamps
from notifications import lifecycle
from push import keys, services, tasks
from push.http import PushSession
from push.models import PushSubscription
from push.payload import MAX_PLAIN_BYTES, Alert
from tests.push.conftest import push_worker
from tests.waiting import eventually


def pushes(outcome: str) -> float:
    return REGISTRY.get_sample_value("wms_push_requests_total", {"outcome": outcome}) or 0.0


def test_a_critical_alert_reaches_each_subscribed_browser_encrypted_and_signed(
    warehouse, other_warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    rita, ralf, olga = crew
    phone, tablet = browser_at("rita-phone"), browser_at("rita-tablet")
    subscribe(rita, phone, warehouse)
    subscribe(rita, tablet, warehouse, other_warehouse)
    subscribe(ralf, browser_at("ralf-phone"), other_warehouse)  # not for SH01
    subscribe(olga, browser_at("olga-phone"), warehouse)  # SH01, but not a recipient

    before = timestamps.now_ms()
    result = send()

    assert {r.path for r in push_service.received} == {"/push/rita-phone", "/push/rita-tablet"}
    [push] = push_service.to("rita-phone")
    expected = {
        "id": result.id,
        "warehouse": warehouse.pk,
        "title": "Stock-out at A-01-03",
        "body": "Stock is -12 after wave 8812",
        "severity": "critical",
        "status": "open",
        "url": f"/?warehouse={warehouse.pk}&notification={result.id}",
    }
    assert phone.decrypt(push.body) == expected
    assert tablet.decrypt(push_service.to("rita-tablet")[0].body) == expected
    # Each browser's copy is encrypted for it alone.
    with pytest.raises(Exception):  # noqa: B017, PT011  (http_ece's error for a wrong key)
        tablet.decrypt(push.body)
    assert push.headers["content-encoding"] == "aes128gcm"
    assert push.headers["urgency"] == "high"
    assert push.headers["topic"] == result.id.replace("-", "")
    # TTL: the notification's remaining life (600 s from publishing).
    elapsed = (timestamps.now_ms() - before) / 1000
    assert 600 - elapsed - 1 <= int(push.headers["ttl"]) <= 600
    # VAPID (RFC 8292): signed with the key browsers subscribed with, for this push service.
    authorization = push.headers["authorization"]
    assert Vapid.verify(authorization)
    assert authorization.endswith(f"k={keys.current().public_key}")
    assert PushSubscription.objects.get(endpoint=phone.endpoint).last_success_at is not None


def test_below_the_minimum_severity_nothing_is_pushed(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    phone = browser_at("rita-phone")
    subscribe(crew[0], phone, warehouse)

    send(severity="warning")
    send(severity="info")
    assert push_service.received == []

    settings.WEB_PUSH_MIN_SEVERITY = "warning"
    warning = send(severity="warning")
    [push] = push_service.received
    assert phone.decrypt(push.body)["id"] == warning.id
    assert push.headers["urgency"] == "normal"


def test_an_escalation_is_pushed_to_the_escalation_roles_subscribed_members(
    warehouse, crew, rep_notice, send, push_service, browser_at, subscribe, celery_eager, make_user
):
    rita = crew[0]
    supervisors = Group.objects.create(name="Supervisors")
    sam = make_user("sam", supervisors)
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = supervisors
    rep_notice.save()
    sams_phone = browser_at("sam-phone")
    subscribe(sam, sams_phone, warehouse)
    subscribe(rita, browser_at("rita-phone"), warehouse)

    result = send(severity="info")  # below the minimum: no push on publishing
    assert push_service.received == []

    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=result.created_at_ms + 120_000) == 1

    [push] = push_service.received
    assert push.path == "/push/sam-phone"
    content = sams_phone.decrypt(push.body)
    assert (content["id"], content["severity"], content["status"]) == (result.id, "warning", "open")
    assert push.headers["urgency"] == "normal"


def test_publishing_never_waits_for_the_push_service(
    transactional_db, warehouse, crew, send, push_service, browser_at, subscribe
):
    """With a real worker: the push service holds every answer back, publishing returns."""
    subscribe(crew[0], browser_at("rita-phone"), warehouse)
    push_service.hold()
    with push_worker():
        started = time.monotonic()
        result = send()
        took = time.monotonic() - started
        # The push arrives after publishing returned, and is still waiting for its answer.
        assert eventually(lambda: push_service.waiting == 1)
        assert result.recipients == 1
        push_service.release()
        assert eventually(lambda: push_service.waiting == 0)
    assert took < 5  # the push service never answered during the publish (it held for 30 s)


def test_a_push_service_answering_404_or_410_ends_the_subscription(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    rita = crew[0]
    subscribe(rita, browser_at("gone"), warehouse)
    subscribe(rita, browser_at("unknown"), warehouse)
    subscribe(rita, browser_at("fine"), warehouse)
    push_service.answer("gone", 410)
    push_service.answer("unknown", 404)
    gone_before = pushes("gone")

    send()

    assert len(push_service.received) == 3
    assert list(PushSubscription.objects.values_list("endpoint", flat=True)) == [
        push_service.endpoint("fine")
    ]
    assert pushes("gone") == gone_before + 2


def test_failures_are_retried_with_backoff_by_a_real_worker_until_one_gets_through(
    transactional_db, warehouse, crew, send, push_service, browser_at, subscribe, settings
):
    settings.WEB_PUSH_RETRY_FIRST_SECONDS = 0.2
    phone = browser_at("rita-phone")
    subscribe(crew[0], phone, warehouse)
    push_service.answer("rita-phone", 503, 429)
    retried, sent = pushes("retried"), pushes("sent")

    with push_worker():
        result = send()
        assert eventually(lambda: len(push_service.received) == 3)
        assert eventually(lambda: pushes("sent") == sent + 1)

    first, second, third = push_service.received
    assert {phone.decrypt(p.body)["id"] for p in (first, second, third)} == {result.id}
    assert pushes("retried") == retried + 2
    row = PushSubscription.objects.get()
    assert (row.failures, row.total_failures, row.last_error) == (0, 2, "")
    assert row.last_success_at is not None
    assert row.last_failure_at is not None


def test_a_push_that_keeps_failing_is_given_up_after_the_last_retry(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    settings.WEB_PUSH_MAX_RETRIES = 2
    subscribe(crew[0], browser_at("rita-phone"), warehouse)
    push_service.answer("rita-phone", 500, 502, 503, 504)
    failed = pushes("failed")

    send()

    assert len(push_service.received) == 3  # the first try and two retries
    assert pushes("failed") == failed + 1
    row = PushSubscription.objects.get()  # kept: the push service may come back
    assert (row.failures, row.last_error) == (3, "HTTP 503")


def test_a_refused_push_is_not_retried(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    subscribe(crew[0], browser_at("rita-phone"), warehouse)
    push_service.answer("rita-phone", 403)
    failed = pushes("failed")

    send()

    assert len(push_service.received) == 1
    assert pushes("failed") == failed + 1
    assert PushSubscription.objects.get().failures == 1


def test_a_redirect_is_not_followed(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    subscribe(crew[0], browser_at("moved"), warehouse)
    push_service.answer("moved", 307, headers={"Location": push_service.endpoint("elsewhere")})

    send()

    assert [r.path for r in push_service.received] == ["/push/moved"]


def test_an_endpoint_no_longer_allowed_is_not_posted_to(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    subscribe(crew[0], browser_at("rita-phone"), warehouse)
    settings.WEB_PUSH_ALLOWED_HOSTS = ["fcm.googleapis.com"]
    skipped = pushes("skipped")

    send()

    assert push_service.received == []
    assert pushes("skipped") == skipped + 1


def test_without_the_test_ca_the_push_service_is_not_trusted(
    warehouse, crew, push_service, browser_at, subscribe, monkeypatch
):
    """The stand-in's certificate is trusted only through REQUESTS_CA_BUNDLE."""
    subscription = subscribe(crew[0], browser_at("rita-phone"), warehouse)
    alert = Alert("n1", warehouse.pk, "t", "b", "critical", "open", timestamps.now_ms() + 60_000)
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")

    attempt = services.send(subscription, alert, session=PushSession())

    assert attempt.outcome == services.Outcome.RETRY
    assert "SSLError" in attempt.error
    assert push_service.received == []


def test_an_expired_alert_is_not_sent(warehouse, crew, push_service, browser_at, subscribe):
    subscription = subscribe(crew[0], browser_at("rita-phone"), warehouse)
    alert = Alert("n1", warehouse.pk, "t", "b", "critical", "open", timestamps.now_ms() - 1)

    attempt = services.send(subscription, alert, session=PushSession())

    assert attempt.outcome == services.Outcome.SKIPPED
    assert push_service.received == []


def test_a_long_body_is_shortened_to_fit_a_push(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager
):
    phone = browser_at("rita-phone")
    subscribe(crew[0], phone, warehouse)

    send(body="库存不足。" * 800)  # 4,000 characters, 12,000 bytes of UTF-8

    [push] = push_service.received
    assert len(push.body) <= 4096  # what every push service accepts
    content = phone.decrypt(push.body)
    assert content["body"].startswith("库存不足。")
    assert content["body"].endswith("…")
    assert len(content["body"].encode()) < MAX_PLAIN_BYTES


def test_a_broker_that_refuses_the_task_does_not_fail_the_publish(
    warehouse, crew, send, monkeypatch
):
    def refuse(*args, **kwargs):
        raise OperationalError("broker unreachable")

    monkeypatch.setattr(tasks.push_alert, "apply_async", refuse)
    errors = REGISTRY.get_sample_value("wms_push_queue_errors_total") or 0.0

    result = send()

    assert result.recipients == 1  # the role's inbox
    assert REGISTRY.get_sample_value("wms_push_queue_errors_total") == errors + 1


def test_push_counts_are_on_the_metrics_page(
    client, warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    settings.METRICS_TOKEN = "scraper-token"
    subscribe(crew[0], browser_at("gone"), warehouse)
    push_service.answer("gone", 410)
    send()

    text = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scraper-token").content.decode()

    assert 'wms_push_requests_total{outcome="gone"}' in text
    assert "wms_push_queue_errors_total" in text


@pytest.mark.parametrize(
    ("retries", "retry_after", "low", "high"),
    [
        (0, None, 7.5, 10),  # the first delay, less up to a quarter of jitter
        (3, None, 60, 80),
        (10, None, 450, 600),  # capped at the longest
        (0, 120, 120, 120),  # never sooner than Retry-After
        (0, 10_000, 600, 600),  # but a Retry-After beyond the longest is capped too
    ],
)
def test_backoff_doubles_with_jitter_and_honours_retry_after(
    settings, retries, retry_after, low, high
):
    settings.WEB_PUSH_RETRY_FIRST_SECONDS = 10
    settings.WEB_PUSH_RETRY_MAX_SECONDS = 600
    for _ in range(50):
        assert low <= services.backoff_seconds(retries, retry_after) <= high


@pytest.mark.django_db(transaction=True)
def test_one_slow_push_service_delays_no_other_browser(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    """An alert's posts go out at once: a push service that answers one byte every 0.1 s
    (about 8 s) does not hold back the post to another browser (issue 42: one slow endpoint
    made a healthy one wait 17-20 s)."""
    import threading

    settings.WEB_PUSH_TIMEOUT_SECONDS = 30
    rita, ralf, _ = crew
    subscribe(rita, browser_at("slow"), warehouse)  # first in the list of subscriptions
    subscribe(ralf, browser_at("fast"), warehouse)
    slow = push_service.trickle("slow", every=0.1)

    publishing = threading.Thread(target=send)  # eager: the push runs in the publishing thread
    publishing.start()
    try:
        assert eventually(lambda: push_service.to("fast"))
        assert slow.sent < slow.size  # the slow answer is still coming in
    finally:
        publishing.join(timeout=60)
    assert slow.done.wait(timeout=30)
    assert PushSubscription.objects.get(endpoint=browser_at("fast").endpoint).last_success_at


def test_a_flapping_raise_is_not_pushed(
    warehouse, crew, send, push_service, browser_at, subscribe, celery_eager, settings
):
    settings.FLAP_MAX, settings.FLAP_WINDOW_SECONDS = 3, 900
    phone = browser_at("rita-phone")
    subscribe(crew[0], phone, warehouse)

    made = [send(key="A-01-03") for _ in range(3)]
    assert len(push_service.to("rita-phone")) == 3

    folded = send(key="A-01-03")

    assert folded.flapping
    assert folded.id == made[-1].id
    assert len(push_service.to("rita-phone")) == 3
