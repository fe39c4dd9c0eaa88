"""The handover in the admin (SPEC 13): a record of what happened, read-only and told in
sentences in the admin's language, with who accepted it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from shifts.models import Handover, Shift
from subscriptions.models import Warehouse

pytestmark = pytest.mark.django_db

ENDS = dt.datetime(2026, 1, 14, 14, 0, tzinfo=dt.UTC)


def alert(title: str, **extra: object) -> dict[str, object]:
    return {
        "id": f"id-{title}",
        "message_type": "REP_NOTICE",
        "title": title,
        "severity": "warning",
        "status": "open",
        "created_at": "2026-01-14T09:00:00.000Z",
        "claimed_by": None,
        "escalated_at": None,
        "resolved_at": None,
        **extra,
    }


@pytest.fixture
def handover(warehouse: Warehouse, role: Group, make_user) -> Handover:
    """Day (06:00-14:00) left one open alert, one rita held as she went off shift, one ralf
    snoozed past the change and one resolved; nora accepted it."""
    nora = make_user("nora", role)
    shift = Shift.objects.create(
        warehouse=warehouse, role=role, name="Day", starts=dt.time(6), ends=dt.time(14)
    )
    content = {
        "open": [alert("Replenish A-01-03")],
        "claimed_off_shift": [alert("Replenish B-02-01", claimed_by={"id": 7, "username": "rita"})],
        "escalated": [],
        "resolved": [alert("Count aisle C", status="resolved")],
        "snoozed": [
            {
                "id": "id-dock",
                "title": "Check dock 2",
                "severity": "info",
                "status": "open",
                "snoozed_by": {"id": 8, "username": "ralf"},
                "until": "2026-01-14T16:00:00.000Z",
            }
        ],
        "counts": {
            "open": 1,
            "claimed_off_shift": 1,
            "escalated": 0,
            "resolved": 1,
            "snoozed": 1,
        },
        "median_time_to_claim_seconds": 120.0,
        "released": 1,
    }
    return Handover.objects.create(
        warehouse=warehouse,
        role=role,
        shift=shift,
        shift_name="Day",
        starts=ENDS - dt.timedelta(hours=8),
        ends=ENDS,
        content=content,
        notification_id="n-1",
        accepted_by=nora,
        accepted_at=ENDS + dt.timedelta(minutes=3),
    )


def change_url(handover: Handover) -> str:
    return reverse("admin:shifts_handover_change", args=[handover.pk])


def test_a_handover_reads_as_sentences_with_its_alerts_and_who_accepted_it(staff_client, handover):
    page = staff_client.get(change_url(handover), HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    html = page.content.decode()
    for sentence in (
        "1 alert is still open.",
        "1 alert was claimed by someone going off shift.",
        "0 alerts were escalated during the shift.",
        "1 alert is snoozed past the change.",
        "1 alert was resolved during the shift.",
        "1 claim was given back to open at the end of the shift.",
        "Median time to claim: 2 minutes.",
    ):
        assert sentence in html
    for title in ("Replenish A-01-03", "Replenish B-02-01", "Check dock 2", "Count aisle C"):
        assert title in html
    assert "claimed by rita" in html
    assert "snoozed by ralf" in html
    assert "nora" in html  # who accepted it
    # A record: nothing to edit, save or delete, and no raw JSON.
    assert 'name="_save"' not in html
    assert 'name="_continue"' not in html
    assert "deletelink" not in html
    assert "<textarea" not in html
    assert '"claimed_off_shift"' not in html
    assert "&quot;claimed_off_shift&quot;" not in html


def test_the_admin_tells_it_in_chinese_too(staff_client, handover):
    page = staff_client.get(change_url(handover), HTTP_ACCEPT_LANGUAGE="zh-hans")

    html = page.content.decode()
    assert "1 条提醒仍待处理。" in html
    assert "1 条提醒暂缓到换班之后。" in html
    assert "认领用时中位数：2 分钟。" in html  # noqa: RUF001 (Chinese punctuation)


def test_a_handover_cannot_be_changed_or_deleted_in_the_admin(staff_client, handover):
    assert staff_client.post(change_url(handover), {"shift_name": "Other"}).status_code == 403
    delete = reverse("admin:shifts_handover_delete", args=[handover.pk])
    assert staff_client.get(delete).status_code == 403
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403
    listing = staff_client.get(reverse("admin:shifts_handover_changelist"))
    assert listing.status_code == 200
    assert "delete_selected" not in listing.content.decode()
    handover.refresh_from_db()
    assert handover.shift_name == "Day"


def test_a_warehouse_with_handovers_can_still_be_deleted_in_the_admin(
    staff_client, handover, warehouse
):
    delete = reverse("admin:subscriptions_warehouse_delete", args=[warehouse.pk])
    assert staff_client.post(delete, {"post": "yes"}).status_code == 302
    assert not Handover.objects.exists()
