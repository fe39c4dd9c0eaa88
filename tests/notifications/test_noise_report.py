"""The noise report (SPEC 17): API (staff only), admin page, exact figures from a seeded
history, and its cost in Redis commands and queries, bounded whatever the history."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Group
from django.utils import translation

from config import timestamps
from notifications import keys, lifecycle, lifecycle_store, noise_report
from notifications.domain import Actor
from notifications.noise_report import RaisedKey
from notifications.store import report_day
from quiet.models import Silence
from shifts.models import Shift
from subscriptions.models import Subscription
from tests.notifications.test_poll_commands import commands_of

pytestmark = [pytest.mark.single_redis, pytest.mark.django_db(transaction=True)]

HOUR = 3_600_000
DAY = 86_400_000


@pytest.fixture
def floor(clock, warehouse, rep_notice, role, make_user, send, redis, settings):
    """SH01 today, seen at 15:00 UTC. Replenishment (rita, ralf) works 06:00-14:00 and gets
    REP_NOTICE; Picking (pia) works 06:00-14:00 and gets nothing. At 08:00 eight alerts come
    (five with key A-01, three with B-02): more than the budget of 6 in that hour for rita
    and ralf. Then at 08:30: A-01 raised again; a silenced one; two resolved by the system
    unclaimed, one resolved by the system after a claim and release, one resolved by rita."""
    # Five alerts of one key within minutes would flap (SPEC 17): this history counts alerts,
    # so flapping is off here (tests/notifications/test_flapping.py counts folded raises).
    settings.FLAP_MAX = 0
    warehouse.timezone = "UTC"
    warehouse.save()
    pickers = Group.objects.create(name="Picking")
    rita, ralf = make_user("rita", role), make_user("ralf", role)
    make_user("pia", pickers)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    for group in (role, pickers):
        Shift.objects.create(
            warehouse=warehouse, role=group, name="Early", starts=dt.time(6), ends=dt.time(14)
        )
    today = report_day(timestamps.now_ms())
    start = today * DAY

    clock.stop_at(start + 8 * HOUR)
    eight = [send(title=f"n{i}", key="A-01" if i < 5 else "B-02") for i in range(8)]
    clock.stop_at(start + 8 * HOUR + 30 * 60_000)
    assert lifecycle.reraise(warehouse_id=warehouse.pk, notification_id=eight[0].id)
    silence = Silence.objects.create(
        warehouse=warehouse,
        reason="stocktake",
        starts_at=timestamps.ms_to_datetime(start + 8 * HOUR + 30 * 60_000 - 1000),
        ends_at=timestamps.ms_to_datetime(start + 8 * HOUR + 30 * 60_000 + 60_000),
    )
    send(title="held", key="C-03")
    silence.delete()
    for note in eight[1:3]:
        lifecycle_store.resolve_by_system(
            warehouse_id=warehouse.pk,
            notification_id=note.id,
            now_ms=start + 8 * HOUR + 30 * 60_000,
        )
    actor = Actor(rita.pk, "rita")
    for op in ("claim", "release"):
        lifecycle_store.change_by_user(
            op,
            warehouse_id=warehouse.pk,
            notification_id=eight[3].id,
            actor=actor,
            role_ids=[role.pk],
            now_ms=start + 8 * HOUR + 30 * 60_000,
        )
    lifecycle_store.resolve_by_system(
        warehouse_id=warehouse.pk,
        notification_id=eight[3].id,
        now_ms=start + 8 * HOUR + 30 * 60_000,
    )
    lifecycle_store.change_by_user(
        "resolve",
        warehouse_id=warehouse.pk,
        notification_id=eight[4].id,
        actor=actor,
        role_ids=[role.pk],
        now_ms=start + 8 * HOUR + 30 * 60_000,
    )
    # Flapping is counted by its own feature in the same per-day hash, under `flapping`.
    redis.hincrby(keys.report_counts(warehouse.pk, today), f"{rep_notice.code}|flapping", 2)
    clock.stop_at(start + 15 * HOUR)
    return SimpleNamespace(warehouse=warehouse, rita=rita, ralf=ralf, today=today)


def test_the_report_gives_exact_figures_of_a_seeded_history(floor):
    report = noise_report.noise_report(days=1)

    (row,) = report.rows
    assert (row.warehouse_code, row.message_type) == ("SH01", "REP_NOTICE")
    assert row.alerts == 9  # eight and the silenced one
    assert row.alerts_per_operator_hour == round(9 / 24, 3)  # 8 h x (2 + 1) operators
    assert (row.flapping, row.silenced) == (2, 1)
    assert row.resolved_by_system_unclaimed == 2
    assert row.share_resolved_by_system_unclaimed == round(2 / 9, 3)
    assert row.top_keys == [RaisedKey("A-01", 6), RaisedKey("B-02", 3), RaisedKey("C-03", 1)]
    assert [
        (s.role, s.shift_name, s.runs, s.operators, s.over_budget) for s in report.per_shift
    ] == [
        ("Picking", "Early", 1, 1, 0),
        ("Replenishment", "Early", 1, 2, 2),
    ]
    assert report.per_shift[1].operator_hours == 16.0


def test_within_the_budget_nobody_goes_over(floor, settings):
    settings.NOISE_BUDGET_PER_HOUR = 9  # eight and one raise again in the hour from 08:00

    report = noise_report.noise_report(days=1)

    assert [s.over_budget for s in report.per_shift] == [0, 0]


def test_the_api_is_for_staff_only(floor, client_for, make_user, api_client):
    staff = client_for(make_user("boss", is_staff=True))
    operator = client_for(make_user("otto"))

    body = staff.get("/api/v1/reports/noise/", {"days": 7}).json()
    refused = operator.get("/api/v1/reports/noise/")
    anonymous = api_client.get("/api/v1/reports/noise/")
    too_long = staff.get("/api/v1/reports/noise/", {"days": 10_000})
    zero = staff.get("/api/v1/reports/noise/", {"days": 0})

    assert (body["days"], body["budget_per_hour"]) == (7, 6)
    (row,) = body["results"]
    assert row["alerts"] == 9
    assert row["top_keys"][0] == {"key": "A-01", "raises": 6}
    assert row["resolved_by_system_unclaimed"] == 2
    assert body["per_shift"][1]["over_budget"] == 2
    assert refused.status_code == 403
    assert anonymous.status_code in (401, 403)
    assert too_long.status_code == 400
    assert "days" in too_long.json()
    assert zero.status_code == 400


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ["Noise of the last 7 days", "Alerts per operator-hour", "Over the noise budget"]),
        ("zh-hans", ["最近 7 天的噪声", "每操作员工时告警数", "超出噪声预算"]),
    ],
)
def test_the_admin_page_renders(floor, client, make_user, language, words):
    client.force_login(make_user("boss", is_staff=True))

    with translation.override(language):
        page = client.get("/admin/notifications/noisereport/?days=7", HTTP_ACCEPT_LANGUAGE=language)
        index = client.get("/admin/", HTTP_ACCEPT_LANGUAGE=language)

    assert page.status_code == 200
    text = page.content.decode()
    for word in words:
        assert word in text
    assert "<code>A-01</code> \u00d7 6" in text
    assert "/admin/notifications/noisereport/" in index.content.decode()


def test_the_admin_page_is_not_for_operators(client, make_user):
    client.force_login(make_user("otto"))

    assert client.get("/admin/notifications/noisereport/").status_code == 302


def test_raised_keys_are_kept_bounded_and_expire(floor, redis, settings):
    key = keys.report_raised_keys(floor.warehouse.pk, floor.today)
    hours = keys.report_noise_hours(floor.warehouse.pk, floor.today)

    for name in (key, hours):
        ttl_days = redis.pttl(name) / DAY
        retention = settings.ALERT_REPORT_RETENTION_DAYS
        assert retention < ttl_days <= retention + 1


def _history(clock, send, warehouse, days: int, per_day: int) -> None:
    today = report_day(timestamps.now_ms())
    for back in range(days):
        for i in range(per_day):
            clock.stop_at((today - back) * DAY + 7 * HOUR + i * 60_000)
            send(title=f"h{back}-{i}", key=f"K-{i % 13}")


def test_the_cost_is_bounded_whatever_the_history(
    floor, clock, send, redis, django_assert_max_num_queries
):
    now = timestamps.now_ms()

    def cost(days: int) -> int:
        clock.stop_at(now)
        with django_assert_max_num_queries(6):
            _, spent = commands_of(redis, lambda: noise_report.noise_report(days=days))
        return sum(spent.values())

    cost(1)  # what a process loads once (the schedule it holds) is not the report's
    one_day, month = cost(1), cost(30)
    _history(clock, send, floor.warehouse, days=30, per_day=40)
    one_day_busy, month_busy = cost(1), cost(30)

    # Three reads per warehouse and day (in one pipeline), the same however busy the days were.
    assert one_day == one_day_busy <= 10
    assert month == month_busy == one_day + 29 * 3
