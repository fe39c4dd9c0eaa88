"""The alert lifecycle in real browsers: two operators, one claims; resolve; escalation;
history; desktop alerts for critical ones; Chinese."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from config import timestamps
from notifications import lifecycle, selectors
from notifications.domain import Actor
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.conftest import notify


def username(actor: Actor | None) -> str | None:
    return None if actor is None else actor.username


pytestmark = pytest.mark.browser

# Stands in for the browser's Notification API (headless Chromium shows none), recording what
# the page would have shown, as if the user had allowed notifications.
FAKE_NOTIFICATIONS = """
window.__shown = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__shown.push({ title, body: options?.body }); }
  addEventListener() {}
};
"""


@pytest.fixture
def crew(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> list[User]:
    """alice and bob, whose Replenishment role receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return [make_user("alice", role), make_user("bob", role)]


def entry(page, title: str):
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def test_one_claims_and_the_colleagues_badge_drops(open_screen, crew, warehouse):
    alice, bob = crew
    note_id = notify(warehouse, "Replenish A-01-03", severity="warning")
    left, right = open_screen(alice), open_screen(bob)
    for screen in (left, right):
        expect(screen.page.locator("#unread-count")).to_have_text("1")
        expect(entry(screen.page, "Replenish A-01-03").locator(".severity-chip")).to_have_text(
            "Warning"
        )

    entry(left.page, "Replenish A-01-03").get_by_role("button", name="Claim", exact=True).click()

    mine = entry(left.page, "Replenish A-01-03")
    expect(mine).to_contain_text("Claimed by alice")
    expect(mine.get_by_role("button", name="Release", exact=True)).to_be_visible()
    expect(left.page.locator("#unread-count")).to_be_hidden()
    theirs = entry(right.page, "Replenish A-01-03")
    expect(theirs).to_contain_text("Claimed by alice")
    expect(right.page.locator("#unread-count")).to_be_hidden()  # bob's badge dropped to 0
    expect(theirs.get_by_role("button", name="Claim", exact=True)).to_have_count(0)
    expect(theirs.get_by_role("button", name="Release", exact=True)).to_have_count(0)
    right.shot("20-claimed-by-a-colleague")

    theirs.get_by_role("button", name="Resolve", exact=True).click()

    # Resolved ones leave the default view (SPEC 12) and are under their own filter.
    for screen in (left, right):
        expect(entry(screen.page, "Replenish A-01-03")).to_have_count(0)
        screen.page.locator(".filters [data-filter=resolved]").click()
    expect(entry(left.page, "Replenish A-01-03")).to_contain_text("Resolved by bob")
    expect(entry(right.page, "Replenish A-01-03")).to_contain_text("Resolved by bob")
    expect(entry(left.page, "Replenish A-01-03").locator(".item-actions button")).to_have_count(0)
    left.shot("21-resolved")
    state = selectors.inbox_page(user=alice, warehouse_id=warehouse.pk, include_read=True)
    (item,) = state.items
    assert item.notification.id == note_id
    assert username(item.lifecycle.resolved_by) == "bob"


def test_a_claim_lost_to_a_colleague_is_explained(open_screen, crew, warehouse):
    alice, bob = crew
    note_id = notify(warehouse, "Replenish B-02-01")
    screen = open_screen(bob)
    claim_button = entry(screen.page, "Replenish B-02-01").get_by_role(
        "button", name="Claim", exact=True
    )
    expect(claim_button).to_be_visible()
    # Bob's page hears nothing new (its polls fail) until he has clicked: otherwise a poll
    # every 0.5 s could show alice's claim first and take the button away.
    page = screen.page
    page.route(
        "**/api/v1/notifications/**",
        lambda route: route.abort() if route.request.method == "GET" else route.continue_(),
    )
    lifecycle.claim(user=alice, warehouse_id=warehouse.pk, notification_id=note_id)

    claim_button.click()  # before bob's page heard of alice's claim
    page.unroute("**/api/v1/notifications/**")

    expect(screen.page.locator(".toast")).to_contain_text("Already claimed by alice")
    expect(entry(screen.page, "Replenish B-02-01")).to_contain_text("Claimed by alice")


def test_history_in_the_dialog(open_screen, crew, warehouse):
    alice, _ = crew
    note_id = notify(warehouse, "Replenish C-03-02")
    lifecycle.claim(user=alice, warehouse_id=warehouse.pk, notification_id=note_id)
    screen = open_screen(alice)
    page = screen.page

    entry(page, "Replenish C-03-02").locator(".inbox-item").click()
    dialog = page.locator("#notification-dialog")
    expect(dialog.locator("#dialog-status")).to_contain_text("Claimed by alice")
    dialog.get_by_role("button", name="History", exact=True).click()

    events = dialog.locator("#dialog-history .history-entry")
    expect(events).to_have_count(2)
    expect(events.nth(0)).to_contain_text("Published")
    expect(events.nth(1)).to_contain_text("Claimed")
    expect(events.nth(1)).to_contain_text("alice")
    screen.shot("22-history")
    dialog.get_by_role("button", name="Resolve", exact=True).click()
    expect(dialog.locator("#dialog-status")).to_contain_text("Resolved by alice")
    expect(events).to_have_count(3)  # the open history follows the change
    expect(events.nth(2)).to_contain_text("Resolved")


def test_escalation_reaches_the_supervisor(open_screen, crew, warehouse, rep_notice, make_user):
    supervisors = Group.objects.create(name="Supervisors")
    rep_notice.escalate_after_seconds = 120
    rep_notice.escalation_role = supervisors
    rep_notice.save()
    sam = make_user("sam", supervisors)
    note_id = notify(warehouse, "Stock-out A-01-03", severity="warning")
    operator = open_screen(crew[0])
    supervisor = open_screen(sam)
    expect(operator.page.locator("#unread-count")).to_have_text("1")
    expect(supervisor.page.locator("#inbox-empty")).to_be_visible()

    escalated = lifecycle.escalate_warehouse(warehouse.pk, at_ms=timestamps.now_ms() + 121_000)

    assert escalated == 1
    expect(supervisor.page.locator("#unread-count")).to_have_text("1")
    item = entry(supervisor.page, "Stock-out A-01-03")
    expect(item).to_contain_text("Escalated")
    expect(item.locator(".severity-chip")).to_have_text("Critical")
    expect(entry(operator.page, "Stock-out A-01-03").locator(".severity-chip")).to_have_text(
        "Critical"
    )
    supervisor.shot("23-escalated")
    events = selectors.history(user=sam, warehouse_id=warehouse.pk, notification_id=note_id)
    assert events is not None
    assert [e.event for e in events] == ["published", "escalated"]


def test_a_critical_alert_raises_a_desktop_notification(open_screen, crew, warehouse):
    screen = open_screen(crew[0])
    page = screen.page
    page.add_init_script(FAKE_NOTIFICATIONS)
    page.reload()
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")

    notify(warehouse, "Routine count")
    expect(page.locator("#unread-count")).to_have_text("1")
    notify(warehouse, "Stock-out A-01-03", severity="critical", body="Pick face empty")
    expect(page.locator("#unread-count")).to_have_text("2")

    shown = page.evaluate("window.__shown")
    assert shown == [{"title": "Stock-out A-01-03", "body": "Pick face empty"}]


def test_lifecycle_words_in_chinese(open_screen, crew, warehouse):
    note_id = notify(warehouse, "补货 A-01-03", severity="critical")
    lifecycle.claim(user=crew[1], warehouse_id=warehouse.pk, notification_id=note_id)
    screen = open_screen(crew[0])
    page = screen.page
    page.locator("#language-select").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    item = entry(page, "补货 A-01-03")
    expect(item.locator(".severity-chip")).to_have_text("严重")
    expect(item).to_contain_text("bob 已认领")
    expect(item.get_by_role("button", name="解决", exact=True)).to_be_visible()
    screen.shot("24-lifecycle-chinese")
