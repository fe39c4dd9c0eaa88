"""The warehouse page in a real browser: sign in, the bell, reading, and surviving outages."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.contrib.sessions.models import Session
from django.core.management import call_command
from playwright.sync_api import Dialog, expect

from directory.sessions import SessionStore
from notifications import selectors
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.browser


@pytest.fixture
def operator(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> User:
    """alice, whose role receives REP_NOTICE in SH01."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


def notify(warehouse: Warehouse, title: str, body: str = "", **data: object) -> str:
    result = publish(
        message_type="REP_NOTICE", warehouse=warehouse, title=title, body=body, data=data or None
    )
    assert result.recipients == 1
    return result.id


def test_sign_in_and_see_the_warehouse(open_screen, operator, warehouse):
    screen = open_screen(None)
    page = screen.page
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    screen.shot("01-login")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill("pw-alice")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#inbox-title")).to_have_text("Shanghai 1")
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")
    expect(page.locator("#inbox-empty")).to_be_visible()
    expect(page.locator("#unread-count")).to_be_hidden()
    screen.shot("02-warehouse-empty")


def test_unread_count_rises_after_a_publish(open_screen, operator, warehouse):
    screen = open_screen(operator)
    page = screen.page
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")
    notify(warehouse, "Replenish A-01-03", "Stock is -12 after wave 8812", bin="A-01-03", qty=-12)
    badge = page.locator("#unread-count")
    expect(badge).to_have_text("1")
    expect(badge).to_be_visible()
    expect(page.locator(".toast")).to_contain_text("New: Replenish A-01-03")
    expect(page.locator("#inbox-list .inbox-item")).to_have_count(1)
    expect(page).to_have_title(re.compile(r"^\(1\) "))
    screen.shot("03-unread-arrived")
    notify(warehouse, "Replenish B-02-01")
    expect(badge).to_have_text("2")
    # The cursor is kept per warehouse in the browser, so a reload only asks for what is new.
    cursor = page.evaluate(
        f"localStorage.getItem('wms-notify:{operator.pk}:cursor:{warehouse.pk}')"
    )
    assert cursor is not None
    assert int(cursor) >= 2


def test_open_a_notification_to_read_it(open_screen, operator, warehouse):
    notify(warehouse, "Replenish A-01-03", "Stock is -12 after wave 8812", bin="A-01-03", qty=-12)
    notify(warehouse, "Replenish B-02-01", "Stock is -3")
    screen = open_screen(operator)
    page = screen.page
    badge = page.locator("#unread-count")
    expect(badge).to_have_text("2")
    page.locator("#bell-button").click()
    summaries = page.locator("#unread-list .summary-title")
    expect(summaries).to_have_text(["Replenish B-02-01", "Replenish A-01-03"])  # newest first
    screen.shot("04-unread-panel")
    page.locator("#unread-list .summary", has_text="Replenish A-01-03").click()
    dialog = page.locator("#notification-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#dialog-title")).to_have_text("Replenish A-01-03")
    expect(dialog.locator("#dialog-body")).to_have_text("Stock is -12 after wave 8812")
    expect(dialog.locator("#dialog-data")).to_contain_text("A-01-03")
    expect(dialog.locator("#dialog-time")).not_to_be_empty()
    expect(badge).to_have_text("1")
    screen.shot("05-notification-open")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#inbox-list .inbox-item.is-read")).to_have_count(1)
    assert selectors.unread_summary(user=operator, warehouse_id=warehouse.pk).unread_count == 1


def test_mark_all_read(open_screen, operator, warehouse):
    for n in range(3):
        notify(warehouse, f"Replenish bin {n}")
    screen = open_screen(operator)
    page = screen.page
    expect(page.locator("#unread-count")).to_have_text("3")
    page.locator("#bell-button").click()
    expect(page.locator("#unread-list .summary")).to_have_count(3)
    page.get_by_role("button", name="Mark all read").click()
    expect(page.locator("#unread-count")).to_have_text("0")
    expect(page.locator("#unread-empty")).to_be_visible()
    expect(page.locator("#inbox-list .inbox-item.is-read")).to_have_count(3)
    screen.shot("06-all-read")
    assert selectors.unread_summary(user=operator, warehouse_id=warehouse.pk).unread_count == 0


def test_html_in_a_title_is_shown_as_text(open_screen, operator, warehouse):
    evil = "<img src=x onerror=alert(1)>"
    notify(warehouse, evil, "<b>bold?</b>", note="<script>alert(2)</script>")
    screen = open_screen(operator)
    page = screen.page
    dialogs: list[str] = []

    def refuse(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", refuse)
    page.locator("#bell-button").click()
    expect(page.locator("#unread-list .summary-title")).to_have_text(evil)
    page.locator("#unread-list .summary").first.click()
    expect(page.locator("#dialog-title")).to_have_text(evil)
    expect(page.locator("#dialog-body")).to_have_text("<b>bold?</b>")
    expect(page.locator("#dialog-data")).to_contain_text("<script>alert(2)</script>")
    screen.shot("07-html-as-text")
    assert page.locator("main img, #notification-panel img, dialog img, dialog b").count() == 0
    assert dialogs == []


def test_the_chosen_warehouse_is_remembered(
    open_screen, operator, warehouse, other_warehouse, rep_notice, role
):
    Subscription.objects.create(message_type=rep_notice, warehouse=other_warehouse, role=role)
    notify(warehouse, "Shanghai needs you")
    screen = open_screen(operator)
    page = screen.page
    # Both are subscribed, so the first by code is the default.
    expect(page.locator("#inbox-title")).to_have_text("Beijing 2")
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")
    page.locator("#warehouse-select").select_option(label="SH01 · Shanghai 1")
    expect(page.locator("#inbox-title")).to_have_text("Shanghai 1")
    expect(page.locator("#unread-count")).to_have_text("1")
    page.reload()
    expect(page.locator("#warehouse-select")).to_have_value(str(warehouse.pk))
    expect(page.locator(".inbox-item-title")).to_have_text("Shanghai needs you")


def test_the_page_keeps_working_through_a_redis_outage(
    open_screen, operator, warehouse, redis_server
):
    notify(warehouse, "Before the outage")
    screen = open_screen(operator)
    page = screen.page
    badge = page.locator("#unread-count")
    status = page.locator("#connection-status")
    expect(badge).to_have_text("1")
    expect(status).to_be_hidden()
    redis_server.stop()
    try:
        expect(status).to_be_visible()
        expect(status).to_contain_text("Reconnecting")
        expect(badge).to_have_text("1")  # what was shown stays shown
        screen.shot("08-reconnecting")
    finally:
        redis_server.restart()
    # The restarted server is empty: mirror the subscriptions again (beat does this in
    # production) and publish something new; the page recovers without a reload.
    call_command("sync_subscriptions", verbosity=0)
    notify(warehouse, "After the outage")
    expect(status).to_be_hidden()
    expect(badge).to_have_text("1")
    expect(page.locator("#inbox-list .inbox-item-title")).to_have_text(["After the outage"])
    screen.shot("09-recovered")


def test_an_ended_session_is_said_plainly(open_screen, operator, warehouse):
    screen = open_screen(operator)
    page = screen.page
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")
    for row in Session.objects.all():  # signed out elsewhere (the store drops both copies)
        SessionStore(row.session_key).delete()
    status = page.locator("#connection-status")
    expect(status).to_contain_text("Signed out")
    expect(status).to_have_class(re.compile(r"is-error"))


def test_the_page_speaks_chinese(open_screen, operator, warehouse):
    screen = open_screen(operator)
    page = screen.page
    page.locator("#language-select").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.locator("#mark-all-read")).to_have_text("全部标为已读")
    expect(page.locator("#inbox-summary")).to_have_text("没有未读通知")  # from the JS catalog
    notify(warehouse, "补货 A-01-03")
    expect(page.locator(".toast")).to_contain_text("新通知\N{FULLWIDTH COLON}补货 A-01-03")
    screen.shot("10-chinese")


def test_retries_back_off_exponentially(open_screen, operator):
    screen = open_screen(operator)
    delays = screen.page.evaluate("""async () => {
        const { Poller } = await import('/static/web/js/poller.js');
        const poller = new Poller({ intervalMs: 1000, maxBackoffMs: 60000 });
        const delays = [];
        for (let failures = 1; failures <= 8; failures++) {
            poller.failures = failures;
            delays.push(poller.backoffMs(null));
        }
        poller.failures = 1;
        delays.push(poller.backoffMs({ retryAfter: 5 }));
        return delays;
    }""")
    for failures, delay in enumerate(delays[:6], start=1):
        assert 0.8 * 1000 * 2 ** (failures - 1) <= delay <= 1.2 * 1000 * 2 ** (failures - 1)
    assert delays[7] == 60000  # capped
    assert delays[8] == 5000  # the server's Retry-After is respected
