"""The managers' alert report (SPEC section 7): API (staff only) and admin page."""

from types import SimpleNamespace

import pytest

from config import timestamps
from notifications import lifecycle, lifecycle_store, reports
from notifications.domain import Actor
from notifications.reports import Spread
from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def busy_day(warehouse, rep_notice, role, make_user, send):
    """SH01: four alerts; three claimed after 10, 20 and 30 s, two resolved after 60 and 120 s,
    one escalated."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    rita = make_user("rita", role)
    notes = [send(title=f"n{i}") for i in range(4)]
    actor = Actor(rita.pk, "rita")

    def change(op: str, note, after_s: int) -> None:
        answer = lifecycle_store.change_by_user(
            op,
            warehouse_id=warehouse.pk,
            notification_id=note.id,
            actor=actor,
            role_ids=[role.pk],
            now_ms=note.created_at_ms + after_s * 1000,
        )
        assert answer.changed

    for note, after in zip(notes, (10, 20, 30), strict=False):
        change("claim", note, after)
    change("resolve", notes[0], 60)
    change("resolve", notes[1], 120)
    rep_notice.escalate_after_seconds = 1
    rep_notice.save()
    escalating = send(title="late")  # the type escalates from now on
    assert lifecycle.escalate_warehouse(warehouse.pk, at_ms=escalating.created_at_ms + 1000) == 1
    return SimpleNamespace(warehouse=warehouse, notes=notes, change=change)


def test_spread_is_median_and_p90_by_nearest_rank():
    assert Spread.of([]) is None
    assert Spread.of([30_000, 10_000, 20_000]) == Spread(median=20.0, p90=30.0, samples=3)
    assert Spread.of(list(range(1000, 11_000, 1000))) == Spread(median=5.0, p90=9.0, samples=10)


def test_report_counts_and_times(busy_day):
    report = reports.alert_report(days=7)

    (row,) = report.rows
    assert (row.warehouse_code, row.message_type) == ("SH01", "REP_NOTICE")
    assert (row.published, row.claimed, row.resolved, row.escalated) == (5, 3, 2, 1)
    assert row.time_to_claim == Spread(median=20.0, p90=30.0, samples=3)
    assert row.time_to_resolve == Spread(median=60.0, p90=120.0, samples=2)


def test_a_claim_counts_once_however_often_it_is_claimed(busy_day):
    for _ in range(2):  # released and claimed again: still one alert claimed
        busy_day.change("release", busy_day.notes[2], 40)
        busy_day.change("claim", busy_day.notes[2], 50)

    (row,) = reports.alert_report(days=1).rows
    assert row.time_to_claim is not None
    assert row.claimed == 3
    assert row.time_to_claim.samples == 3


def test_days_outside_the_period_are_left_out(busy_day):
    a_week_later = timestamps.now_ms() + 8 * 86_400_000

    report = reports.alert_report(days=7, at_ms=a_week_later)

    assert report.rows == []
    assert (report.last_day - report.first_day).days == 6


def test_the_api_is_for_staff_only(busy_day, client_for, make_user, api_client):
    staff = client_for(make_user("boss", is_staff=True))
    operator = client_for(make_user("otto"))

    body = staff.get("/api/v1/reports/alerts/", {"days": 7}).json()
    refused = operator.get("/api/v1/reports/alerts/")
    anonymous = api_client.get("/api/v1/reports/alerts/")
    bad = staff.get("/api/v1/reports/alerts/", {"days": 0})

    assert body["days"] == 7
    (row,) = body["results"]
    assert row == {
        "warehouse": busy_day.warehouse.pk,
        "warehouse_code": "SH01",
        "message_type": "REP_NOTICE",
        "message_type_name": "补货通知",
        "published": 5,
        "claimed": 3,
        "resolved": 2,
        "escalated": 1,
        "time_to_claim": {"median": 20.0, "p90": 30.0, "samples": 3},
        "time_to_resolve": {"median": 60.0, "p90": 120.0, "samples": 2},
    }
    assert refused.status_code == 403
    assert anonymous.status_code in (401, 403)
    assert bad.status_code == 400


def test_type_names_follow_the_language_of_the_request(busy_day, client_for, make_user):
    MessageType.objects.filter(code="REP_NOTICE").update(name_en="Replenishment notice")
    staff = client_for(make_user("boss", is_staff=True))

    def name_in(language: str) -> str:
        body = staff.get("/api/v1/reports/alerts/", HTTP_ACCEPT_LANGUAGE=language).json()
        return body["results"][0]["message_type_name"]

    assert name_in("en") == "Replenishment notice"
    assert name_in("zh-hans") == "补货通知"


def test_the_admin_page_shows_the_same_table(busy_day, client, make_user):
    boss = make_user("boss", is_staff=True)
    client.force_login(boss)

    page = client.get("/admin/notifications/alertreport/?days=30")
    index = client.get("/admin/")

    assert page.status_code == 200
    text = page.content.decode()
    assert "Alerts of the last 30 days" in text
    assert "<td>SH01</td>" in text
    assert "<td>20.0 s</td>" in text
    assert "<td>120.0 s</td>" in text
    assert "/admin/notifications/alertreport/" in index.content.decode()


def test_the_admin_page_is_not_for_operators(client, make_user):
    client.force_login(make_user("otto"))

    assert client.get("/admin/notifications/alertreport/").status_code == 302  # to admin login


def test_report_keys_expire_after_the_retention(busy_day, redis, settings):
    from notifications import keys
    from notifications.store import report_day

    key = keys.report_counts(busy_day.warehouse.pk, report_day(timestamps.now_ms()))
    ttl_days = redis.pttl(key) / 86_400_000

    assert (
        settings.ALERT_REPORT_RETENTION_DAYS < ttl_days <= settings.ALERT_REPORT_RETENTION_DAYS + 1
    )
