"""The page on the floor (SPEC 12, turn 4), in Chromium at 360x640 with touch: who is on shift
now in the shown warehouse, and a sound or vibration for a critical alert while the page is open."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from playwright.sync_api import expect

from notifications.services import publish
from shifts.models import Shift
from subscriptions.models import Subscription, Warehouse

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fresh_schedule")]

HANDHELD: dict[str, Any] = {"size": (360, 640), "mobile": True}


@pytest.fixture
def crew(make_user, role: Group, warehouse: Warehouse, rep_notice) -> list[User]:
    """alice and bob, whose Replenishment role receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return [make_user("alice", role), make_user("bob", role)]


def local_time(warehouse: Warehouse, hours_from_now: float) -> dt.time:
    at = timezone.now() + dt.timedelta(hours=hours_from_now)
    return at.astimezone(ZoneInfo(warehouse.timezone)).time().replace(second=0, microsecond=0)


@pytest.fixture
def shifts(crew, make_user, role, warehouse) -> dict[str, Any]:
    """Replenishment's Early shift runs now; the Night role (carol) is off until later."""
    night = Group.objects.create(name="Night")
    carol = make_user("carol", night)
    early = Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name="Early",
        starts=local_time(warehouse, -1),
        ends=local_time(warehouse, 2),
    )
    Shift.objects.create(
        warehouse=warehouse,
        role=night,
        name="Night",
        starts=local_time(warehouse, 4),
        ends=local_time(warehouse, 6),
    )
    return {"early": early, "carol": carol, "night": night}


def test_the_lead_sees_who_is_on_shift_now(open_screen, crew, shifts, make_user, role):
    alice, _ = crew
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    page.locator("#bell-button").tap()
    section = page.locator("#on-shift")
    expect(section).to_be_visible()
    expect(section.locator(".on-shift-title")).to_have_text("On shift now")
    rows = section.locator(".on-shift-role")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Replenishment · Early until")
    expect(rows.nth(0).locator(".on-shift-members")).to_have_text("alice, bob")
    expect(rows.nth(1)).to_contain_text("Night · off shift until")
    expect(rows.nth(1)).not_to_contain_text("carol")  # not on shift
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    box = section.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 360
    screen.shot("54-on-shift")

    # Who is on follows the schedule: a colleague joins the role.
    make_user("dave", role)
    page.locator("#bell-button").tap()
    expect(page.locator("#notification-panel")).to_be_hidden()
    page.locator("#bell-button").tap()
    expect(rows.nth(0).locator(".on-shift-members")).to_have_text("alice, bob, dave")


def test_someone_outside_the_shifts_sees_no_shift_panel(open_screen, crew, shifts, make_user):
    """The on-now endpoint answers members of the warehouse's shift roles and staff (others
    404): a visitor's page shows the bell without the panel, and no error."""
    stranger = make_user("stranger")
    screen = open_screen(stranger, **HANDHELD)
    page = screen.page
    page.locator("#bell-button").tap()
    expect(page.locator("#notification-panel")).to_be_visible()
    expect(page.locator("#unread-empty")).to_be_visible()
    expect(page.locator("#on-shift")).to_be_hidden()


# Records what the page does to get attention: navigator.vibrate(pattern) and each tone it
# starts (Web Audio), before any script of the page runs.
ALARM_HOOK = """
window.__alarms = [];
Object.defineProperty(Navigator.prototype, "vibrate", {
  configurable: true,
  value(pattern) { window.__alarms.push(["vibrate", pattern]); return true; },
});
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) {
  window.__alarms.push(["tone"]);
  return start.apply(this, args);
};
"""


def publish_one(warehouse: Warehouse, title: str, severity: str) -> None:
    publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, severity=severity)


def test_a_live_critical_sounds_and_vibrates_only_with_the_setting_on(
    open_live_screen, crew, warehouse
):
    alice, _ = crew
    screen = open_live_screen(alice, **HANDHELD)
    page = screen.page
    page.add_init_script(ALARM_HOOK)
    page.reload()
    expect(page.locator("#delivery-mode")).to_have_text("Live")

    def alarms() -> list:
        return page.evaluate("window.__alarms")

    def arrived(title: str) -> None:
        expect(page.locator("#inbox-list .inbox-entry", has_text=title)).to_have_count(1)

    def setting_to(on: bool) -> None:
        page.locator("#bell-button").tap()
        setting.tap()
        expect(setting).to_have_attribute("aria-pressed", "true" if on else "false")
        page.locator("#bell-button").tap()
        expect(page.locator("#notification-panel")).to_be_hidden()

    setting = page.get_by_role("button", name="Sound for critical alerts")
    page.locator("#bell-button").tap()
    expect(setting).to_have_attribute("aria-pressed", "false")  # off by default
    assert_reachable_44(setting)
    page.locator("#bell-button").tap()

    publish_one(warehouse, "Stock-out A-01-03", "critical")
    arrived("Stock-out A-01-03")
    assert alarms() == []  # off: nothing

    setting_to(True)
    publish_one(warehouse, "Stock-out B-02-01", "critical")
    arrived("Stock-out B-02-01")
    page.wait_for_function("window.__alarms.some(([kind]) => kind === 'vibrate')")
    page.wait_for_function("window.__alarms.some(([kind]) => kind === 'tone')")
    rung = len(alarms())
    publish_one(warehouse, "Check dock 1", "info")
    arrived("Check dock 1")
    assert len(alarms()) == rung  # only a critical rings

    page.reload()  # remembered on this device
    page.locator("#bell-button").tap()
    expect(setting).to_have_attribute("aria-pressed", "true")
    page.locator("#bell-button").tap()
    expect(page.locator("#notification-panel")).to_be_hidden()
    setting_to(False)
    publish_one(warehouse, "Stock-out C-03-02", "critical")
    arrived("Stock-out C-03-02")
    assert alarms() == []  # this page's record starts at the reload: nothing since
    assert page.evaluate("localStorage.getItem('wms-notify:alert-sound')") == "off"


def assert_reachable_44(locator) -> None:
    box = locator.bounding_box()
    assert box is not None
    assert box["width"] >= 44
    assert box["height"] >= 44
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 360
