"""The admin answers "what does alice receive?": directly and through her roles, per warehouse
and message type (search, a filter on the subscriptions page, and her user page)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(warehouse: Warehouse, other_warehouse: Warehouse, role: Group, make_user) -> dict:
    """alice is in Replenishment, which receives REP_NOTICE in SH01; she receives QC_ALERT in
    BJ02 herself; STOCK_OUT escalates to Replenishment; the Supervisors' SYS_NOTICE and bob's
    own subscription are not hers."""
    supervisors = Group.objects.create(name="Supervisors")
    alice, bob = make_user("alice", role), make_user("bob", supervisors)
    rep = MessageType.objects.create(code="REP_NOTICE", name="补货通知", name_en="Replenishment")
    qc = MessageType.objects.create(code="QC_ALERT", name="质检提醒", name_en="Quality check")
    sys_notice = MessageType.objects.create(code="SYS_NOTICE", name="系统通知")
    MessageType.objects.create(
        code="STOCK_OUT",
        name="缺货告警",
        name_en="Stock-out",
        escalate_after_seconds=120,
        escalation_role=role,
    )
    inactive = MessageType.objects.create(code="OLD_TYPE", name="旧", is_active=False)
    subs = {
        "rep": Subscription.objects.create(message_type=rep, warehouse=warehouse, role=role),
        "qc": Subscription.objects.create(message_type=qc, warehouse=other_warehouse, user=alice),
        "alice_also": Subscription.objects.create(
            message_type=rep, warehouse=warehouse, user=alice
        ),
        "sys": Subscription.objects.create(
            message_type=sys_notice, warehouse=warehouse, role=supervisors
        ),
        "bob": Subscription.objects.create(message_type=qc, warehouse=warehouse, user=bob),
        "inactive": Subscription.objects.create(
            message_type=inactive, warehouse=warehouse, role=role
        ),
    }
    return {"alice": alice, "subs": subs}


def listed(client, **params: str) -> set[int]:
    page = client.get(
        reverse("admin:subscriptions_subscription_changelist"),
        params,
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert page.status_code == 200
    return {s.pk for s in page.context["cl"].result_list}


def test_searching_a_user_finds_what_they_receive_through_their_roles(staff_client, setup):
    subs = setup["subs"]
    mine = {subs[name].pk for name in ("rep", "qc", "alice_also", "inactive")}

    assert listed(staff_client, q="alice") == mine


def test_the_receiver_filter_lists_a_users_subscriptions_and_their_roles(staff_client, setup):
    subs, alice = setup["subs"], setup["alice"]
    mine = {subs[name].pk for name in ("rep", "qc", "alice_also", "inactive")}

    assert listed(staff_client, receiver=str(alice.pk)) == mine
    page = staff_client.get(
        reverse("admin:subscriptions_subscription_changelist"),
        {"receiver": str(alice.pk)},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert "By receiver" in page.content.decode()  # the filter says whose they are
    assert listed(staff_client, receiver="not-a-number") == set()


def test_a_users_page_lists_what_they_receive_per_warehouse_and_type(staff_client, setup):
    alice = setup["alice"]
    page = staff_client.get(
        reverse("admin:auth_user_change", args=[alice.pk]), HTTP_ACCEPT_LANGUAGE="en"
    )

    assert page.status_code == 200
    rows = _rows(page.content.decode())
    assert rows == [
        ["BJ02", "QC_ALERT - Quality check", "directly"],
        ["BJ02", "STOCK_OUT - Stock-out", "escalated to role Replenishment"],
        ["SH01", "REP_NOTICE - Replenishment", "directly; role Replenishment"],
        ["SH01", "STOCK_OUT - Stock-out", "escalated to role Replenishment"],
    ]
    link = reverse("admin:subscriptions_subscription_changelist") + f"?receiver={alice.pk}"
    assert link in page.content.decode()


def test_a_users_page_says_so_in_chinese(staff_client, setup):
    alice = setup["alice"]
    page = staff_client.get(
        reverse("admin:auth_user_change", args=[alice.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    )

    rows = _rows(page.content.decode())
    assert ["SH01", "REP_NOTICE - 补货通知", "直接; 角色 Replenishment"] in rows


def test_an_inactive_user_receives_nothing(staff_client, setup):
    alice = setup["alice"]
    alice.is_active = False
    alice.save()
    page = staff_client.get(
        reverse("admin:auth_user_change", args=[alice.pk]), HTTP_ACCEPT_LANGUAGE="en"
    )

    assert _rows(page.content.decode()) == []
    assert "inactive and receives nothing" in page.content.decode()


def _rows(html: str) -> list[list[str]]:
    """The cells of the "receives" table's body rows, as text; the lines of a cell (one per
    way it arrives) joined with "; "."""
    table = re.search(r'<table class="receives">(.*?)</table>', html, re.S)
    if table is None:
        return []
    body = re.search(r"<tbody>(.*?)</tbody>", table.group(1), re.S)
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1) if body else "", re.S)
    return [[_text(cell) for cell in re.findall(r"<td>(.*?)</td>", row, re.S)] for row in rows]


def _text(cell: str) -> str:
    lines = re.findall(r"<div>(.*?)</div>", cell, re.S) or [cell]
    return "; ".join(unescape(re.sub(r"<[^>]+>", "", line)).strip() for line in lines)
