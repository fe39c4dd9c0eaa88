"""/healthz for load balancers and /metrics for Prometheus."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from config import status

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_flags_of_earlier_tests():
    """What this process flagged degraded in earlier tests (config.status) is theirs."""
    for name in list(status.degraded()):
        status.clear(name)


def test_healthz_is_200_when_database_and_redis_answer(client: Client, queues_consumed):
    answer = client.get("/healthz")  # anonymous: load balancers log in nowhere
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok"},
        "degraded": {},
    }
    assert "no-cache" in answer["Cache-Control"]


def test_healthz_is_503_and_names_redis_when_it_is_down(client: Client, redis_down):
    answer = client.get("/healthz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("error: ")


def test_healthz_is_never_throttled(client: Client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "1/min"},
    }
    assert {client.get("/healthz").status_code for _ in range(5)} == {200}


def metric(text: str, line_start: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture(autouse=True)
def metrics_token(settings):
    settings.METRICS_TOKEN = "scraper-token"


def scrape(client: Client) -> str:
    """/metrics as a Prometheus scraper with its token sees it (other test modules use this)."""
    with override_settings(METRICS_TOKEN="scraper-token"):
        answer = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scraper-token")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/plain")
    return answer.content.decode()


def test_metrics_count_requests_publishes_deliveries_and_polls(
    client: Client, client_for, warehouse, rep_notice, role, make_user
):
    from notifications.services import publish
    from subscriptions.models import Subscription

    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita, _ralf = make_user("rita", role), make_user("ralf", role)
    before = scrape(client)

    publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")
    api = client_for(rita)
    assert api.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).status_code == 200
    assert api.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).status_code == 200
    after = scrape(client)

    def grew(line_start: str) -> float:
        return metric(after, line_start) - metric(before, line_start)

    assert grew('wms_notifications_published_total{message_type="REP_NOTICE"}') == 1
    assert grew("wms_notification_deliveries_total") == 1  # one inbox: the role's
    assert grew('wms_polls_total{kind="list"}') == 1
    assert grew('wms_polls_total{kind="unread"}') == 1
    assert grew('wms_http_requests_total{method="GET",status="200",view="notifications"}') == 1
    assert "wms_http_request_duration_seconds_bucket" in after
    assert "wms_periodic_task_duration_seconds" in after


def test_metrics_count_redis_errors(client: Client, alice, client_for, redis_down):
    before = scrape(client)
    assert client_for(alice).get("/api/v1/chats/").status_code == 503
    after = scrape(client)
    total = "wms_redis_errors_total{"
    assert sum(
        float(line.rsplit(" ", 1)[1]) for line in after.splitlines() if line.startswith(total)
    ) > sum(float(line.rsplit(" ", 1)[1]) for line in before.splitlines() if line.startswith(total))


def test_metrics_need_the_token_when_one_is_set(client: Client, settings):
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_metrics_are_closed_to_anonymous_visitors_without_a_token(
    client: Client, settings, make_user
):
    """Issue 20, row 3g: with DEBUG off and no METRICS_TOKEN, /metrics is not public."""
    settings.METRICS_TOKEN = ""
    settings.DEBUG = False
    assert client.get("/metrics").status_code == 401

    client.force_login(make_user("clerk"))
    assert client.get("/metrics").status_code == 401
    client.force_login(make_user("boss", is_staff=True))
    assert client.get("/metrics").status_code == 200

    settings.DEBUG = True
    assert Client().get("/metrics").status_code == 200
