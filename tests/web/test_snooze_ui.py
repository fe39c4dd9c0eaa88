"""Snooze on the page (SPEC 13): "Snooze 1 h" in an alert's dialog takes it out of my badge and
list and under the Snoozed filter, Wake brings it back; "until my next shift" without a shift
says so; 44 px targets."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from notifications import selectors
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.browser


@pytest.fixture
def crew(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> list[User]:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return [make_user("alice", role), make_user("bob", role)]


def entry(page, title: str):
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def assert_target_size(page, selector: str) -> None:
    """The first element matching `selector` becomes at least 44x44 CSS px (awaited: the dialog
    draws its buttons again as polls come, and its opening settles)."""
    page.wait_for_function(
        """sel => { const e = document.querySelector(sel);
                    if (!e) return false;
                    const r = e.getBoundingClientRect();
                    return r.width >= 44 && r.height >= 44; }""",
        arg=selector,
        timeout=5000,
    )


def test_snooze_an_hour_then_wake_it(open_screen, crew, warehouse):
    alice, bob = crew
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Count bin B-02")
    left, right = open_screen(alice), open_screen(bob)
    page = left.page
    expect(page.locator("#unread-count")).to_have_text("2")
    # No room on a card for it: snoozing is in the alert's dialog (opening it reads it).
    expect(entry(page, "Replenish A-01-03").get_by_role("button", name="Snooze 1 h")).to_have_count(
        0
    )
    entry(page, "Replenish A-01-03").locator(".inbox-item").click()
    expect(page.locator("#unread-count")).to_have_text("1")
    snooze = page.locator("#dialog-actions").get_by_role("button", name="Snooze 1 h")
    expect(snooze).to_be_visible()
    assert_target_size(page, '#dialog-actions [data-action="snooze-hour"]')

    snooze.click()

    expect(page.locator("#dialog-status")).to_contain_text("Snoozed until")
    expect(page.locator("#dialog-actions").get_by_role("button", name="Wake")).to_be_visible()
    page.locator("#notification-dialog .dialog-close").click()
    expect(page.locator("#unread-count")).to_have_text("1")
    expect(entry(page, "Replenish A-01-03")).to_have_count(0)  # out of sight under All
    expect(entry(page, "Count bin B-02")).to_be_visible()
    expect(right.page.locator("#unread-count")).to_have_text("2")  # bob's is untouched
    page.locator('.filters [data-filter="snoozed"]').click()
    snoozed = entry(page, "Replenish A-01-03")
    expect(snoozed).to_contain_text("Snoozed until")
    expect(entry(page, "Count bin B-02")).to_have_count(0)
    left.shot("60-snoozed-filter")
    (item,) = selectors.snoozed(user=alice, warehouse_id=warehouse.pk)
    assert item.notification.title == "Replenish A-01-03"

    wake = snoozed.get_by_role("button", name="Wake", exact=True)
    expect(wake).to_be_visible()
    assert_target_size(page, '#inbox-list [data-action="wake"]')
    wake.click()

    expect(page.locator("#unread-count")).to_have_text("2")  # back unread, though opened before
    expect(entry(page, "Replenish A-01-03")).to_have_count(0)  # not snoozed any more
    page.locator('.filters [data-filter="all"]').click()
    expect(entry(page, "Replenish A-01-03")).to_be_visible()
    assert selectors.snoozed(user=alice, warehouse_id=warehouse.pk) == []


def test_until_my_next_shift_without_a_shift_says_so(open_screen, crew, warehouse):
    alice, _ = crew
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    screen = open_screen(alice)
    page = screen.page
    expect(page.locator("#unread-count")).to_have_text("1")

    entry(page, "Replenish A-01-03").locator(".inbox-item").click()
    page.locator("#dialog-actions").get_by_role("button", name="Snooze until my next shift").click()

    expect(page.locator("#toasts", has_text="No shift of your roles")).to_be_visible()
    expect(page.locator("#dialog-actions").get_by_role("button", name="Wake")).to_have_count(0)
