"""Mutes and silences on the page (SPEC 17): the bell's panel mutes non-critical alerts for an
hour or until my shift ends (offered only while I am on one), shows the active mute and ends
it; what the mute covers stays listed but leaves the badge, critical still counts; a silenced
alert says so. Whole at 360 px in English and Chinese, and axe-core finds nothing."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, expect

from config import timestamps
from notifications.services import publish
from quiet import services as quiet_services
from shifts import cache
from shifts.models import Shift
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.test_accessibility_ui import violations
from tests.web.test_handheld_ui import assert_no_sideways_overflow, assert_reachable

pytestmark = pytest.mark.browser

HANDHELD = {"size": (360, 640), "mobile": True}


def entry(page: Page, title: str):
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def test_mute_for_an_hour_keeps_warnings_listed_out_of_the_badge_until_it_ends(
    open_screen, make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType
):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    pickers = Group.objects.create(name="Pickers")  # no shifts here: always on, no shift end
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=pickers)
    local = timestamps.now().astimezone(zoneinfo.ZoneInfo(warehouse.timezone))
    Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name="Day",
        starts=(local - dt.timedelta(hours=1)).time(),
        ends=(local + dt.timedelta(hours=3)).time(),
    )
    cache.forget()
    alice, bob = make_user("alice", role), make_user("bob", pickers)
    silence = quiet_services.silence_create(
        warehouse=warehouse,
        message_types=[],
        starts_at=timestamps.now() - dt.timedelta(seconds=1),
        ends_at=timestamps.now() + dt.timedelta(hours=1),
        reason="Stock count",
        include_critical=False,
        created_by=None,
    )
    publish(
        message_type=rep_notice, warehouse=warehouse, title="Counted bin C-01", severity="warning"
    )
    silence.delete()  # what it held back stays held until woken; later ones are not silenced

    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    held = entry(page, "Counted bin C-01")
    expect(held.locator(".silenced-flag")).to_have_text("Silenced")
    expect(page.locator("#unread-count")).to_have_text("0")

    page.locator("#bell-button").tap()
    hour = page.get_by_role("button", name="Mute non-critical for 1 h")
    expect(page.get_by_role("button", name="Mute until my shift ends")).to_be_visible()
    assert_reachable(hour, 360, "mute for an hour")
    hour.tap()
    status = page.locator("#mute-status")
    expect(status).to_contain_text("Muted below critical until")
    end = page.get_by_role("button", name="End mute")
    assert_reachable(end, 360, "end mute")
    expect(hour).to_be_hidden()
    assert_no_sideways_overflow(page, 360)
    assert violations(page) == []
    page.locator("#bell-button").tap()

    publish(
        message_type=rep_notice, warehouse=warehouse, title="Low stock B-02", severity="warning"
    )
    expect(entry(page, "Low stock B-02")).to_be_visible()  # listed, and the poll counted
    expect(page.locator("#unread-count")).to_have_text("0")
    publish(
        message_type=rep_notice, warehouse=warehouse, title="Blocked aisle 4", severity="critical"
    )
    expect(entry(page, "Blocked aisle 4")).to_be_visible()
    expect(page.locator("#unread-count")).to_have_text("1")  # critical gets through

    # In Chinese, for someone with no shift here: no "until my shift ends".
    other = open_screen(bob, locale="zh-CN", **HANDHELD).page
    expect(entry(other, "Low stock B-02")).to_be_visible()
    expect(entry(other, "Counted bin C-01").locator(".silenced-flag")).to_have_text("已静默")
    other.locator("#bell-button").tap()
    other.get_by_role("button", name="非严重告警静音 1 小时").tap()
    expect(other.locator("#mute-status")).to_contain_text("已静音严重以下的告警")
    expect(other.get_by_role("button", name="静音至我下班")).to_be_hidden()
    expect(other.locator("#unread-count")).to_have_text("1")
    assert_no_sideways_overflow(other, 360)
    assert violations(other) == []

    page.locator("#bell-button").tap()
    end.tap()
    expect(status).to_be_hidden()
    expect(page.locator("#unread-count")).to_have_text("2")  # the warning counts again
    expect(hour).to_be_visible()
