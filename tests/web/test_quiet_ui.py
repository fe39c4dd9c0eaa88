"""The noise budget on the page (SPEC 17), in Chromium at 360x640 with touch, English and
Chinese: an alert that came quietly (`quiet: true`, beyond the user's budget) arrives live
without sound, vibration or a ringing bell, carries a small "Came quietly" mark, and the bell's
panel says how many of the unread came quietly; all read in full, and axe-core finds nothing."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import Group, User
from playwright.sync_api import Page, expect

from notifications.services import publish
from subscriptions.models import Subscription, Warehouse
from tests.web.test_floor_ui import ALARM_HOOK
from tests.web.test_handheld_ui import assert_no_sideways_overflow, assert_whole

pytestmark = pytest.mark.browser

HANDHELD: dict[str, Any] = {"size": (360, 640), "mobile": True}
SOUND_ON = "localStorage.setItem('wms-notify:alert-sound', 'on');"

WORDS = {
    "en-US": {"live": "Live", "mark": "Came quietly", "count": "2 came quietly"},
    "zh-CN": {"live": "实时", "mark": "静默送达", "count": "2 条静默送达"},
}


@pytest.fixture
def alice(make_user, role: Group, warehouse: Warehouse, rep_notice) -> User:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


def notify(warehouse: Warehouse, title: str, severity: str) -> None:
    publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, severity=severity)


def entry(page: Page, title: str):
    return page.locator("#inbox-list .inbox-entry", has_text=title)


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_quiet_alert_arrives_without_sound_and_the_bell_counts_it(
    open_live_screen, alice, warehouse, settings, locale
):
    settings.UI_DEFAULT_WAREHOUSE = "SH01"
    words = WORDS[locale]
    for i in range(6):  # the hour's budget, used up
        notify(warehouse, f"Check dock {i + 1}", "warning")
    screen = open_live_screen(alice, locale=locale, **HANDHELD)
    page = screen.page
    page.add_init_script(SOUND_ON + ALARM_HOOK)  # the device's sound is on
    page.reload()
    expect(page.locator("#delivery-mode")).to_have_text(words["live"])
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(6)
    expect(page.locator(".quiet-chip")).to_have_count(0)
    page.evaluate("document.getElementById('bell-button').classList.remove('ring')")

    notify(warehouse, "Replenish A-01-03", "warning")  # the 7th and 8th in the hour
    notify(warehouse, "Replenish B-02-01", "info")
    for title in ("Replenish A-01-03", "Replenish B-02-01"):
        assert_whole(entry(page, title).locator(".quiet-chip"), words["mark"])
    assert page.evaluate("window.__alarms") == []  # no sound, no vibration
    assert "ring" not in (page.locator("#bell-button").get_attribute("class") or "")
    expect(page.locator("#unread-count")).to_have_text("8")

    page.locator("#bell-button").tap()
    assert_whole(page.locator("#unread-quiet"), words["count"])
    assert_whole(page.locator("#unread-list .quiet-chip").first, words["mark"])
    assert_no_sideways_overflow(page, 360)
    found = Axe().run(page).response["violations"]
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []
    screen.shot(f"60-quiet-{locale}")

    # After a reload the count is the unread summary's own `quiet`.
    page.reload()
    page.locator("#bell-button").tap()
    assert_whole(page.locator("#unread-quiet"), words["count"])

    # A critical one is never quiet: it sounds (so the silence above was the quiet's).
    notify(warehouse, "Stock-out C-03-02", "critical")
    expect(entry(page, "Stock-out C-03-02")).to_have_count(1)
    expect(entry(page, "Stock-out C-03-02").locator(".quiet-chip")).to_have_count(0)
    page.wait_for_function("window.__alarms.some(([kind]) => kind === 'tone')")
