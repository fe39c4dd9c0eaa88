"""Keyboard and screen readers on the warehouse page (SPEC 5, 12) and in the admin.

axe-core (bundled by axe-playwright-python) finds no violation on the page at 360x640 with
touch and at 1366x768 with every part open in turn (the bell's panel, an alert's dialog and its
scan dialog, the chat's list, conversation and new chat, a pinned notice and its roster, the
account menu), nor on the admin's list and form of each of the product's models. Esc closes
every panel and dialog, and focus goes back to what opened it: a card's button, the bell, the
chat button, a notice's roster button, even when the page redrew that button meanwhile."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import Group, User
from playwright.sync_api import Locator, Page, expect

from actions.models import AlertAction
from messaging import services as chat_services
from notices import services as notice_services
from notifications.services import publish
from shifts.models import Shift
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD: dict[str, Any] = {"size": (360, 640), "mobile": True}
DESKTOP: dict[str, Any] = {"size": (1366, 768), "mobile": False}

AXE = Axe()


def violations(page: Page, context: dict[str, Any] | None = None) -> list[str]:
    """axe-core's violations on the page as it is now: "rule (impact): targets" each."""
    results = AXE.run(page, context=context)
    return [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes']]}"
        for v in results.response["violations"]
    ]


def report(name: str, found: dict[str, list[str]]) -> None:
    """Keep what axe found in test-artifacts/ (the assertion's message is cut short)."""
    kept = ARTIFACTS / f"axe-{name}.json"
    if found:
        ARTIFACTS.mkdir(exist_ok=True)
        kept.write_text(json.dumps(found, indent=2))
    else:
        kept.unlink(missing_ok=True)


@pytest.fixture
def floor(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> dict[str, Any]:
    """alice (staff: she sees a notice's roster) with two alerts, one with a scan-to-confirm
    action, a notice to read, and a chat with bob."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    alice = make_user("alice", role, is_staff=True)
    bob = make_user("bob", role)
    AlertAction.objects.create(
        message_type=rep_notice,
        code="task-created",
        label="Replenishment task created",
        label_zh="已创建补货任务",
        url="https://wms.example/hooks/task-created",
        confirm_field="bin",
    )
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Check dock 1", body="Door")
    publish(
        message_type="REP_NOTICE",
        warehouse=warehouse,
        title="Stock-out E-05-02",
        body="Pickers waiting",
        severity="critical",
        data={"bin": "E-05-02", "qty": -12},
    )
    notice_services.notice_create(
        user=make_user("otto"),
        warehouse=warehouse,
        title="Forklift lane B closed",
        body="Use lane C until Friday.",
        severity="warning",
        roles=[role],
        users=[],
    )
    chat = chat_services.chat_open_direct(user=bob, other_id=alice.pk)
    chat_services.message_send(user=bob, chat_id=chat.id, body="Bin A-01-03 is empty")
    return {"alice": alice, "bob": bob}


def card(page: Page, title: str) -> Locator:
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def press(locator: Locator, key: str = "Enter") -> None:
    """Reach the control with the keyboard and press it."""
    locator.focus()
    locator.press(key)


def assert_focused(page: Page, locator: Locator, what: str) -> None:
    expect(locator, f"focus goes back to {what}").to_be_focused()
    assert page.evaluate("document.activeElement !== document.body")


@pytest.mark.parametrize("device", [HANDHELD, DESKTOP], ids=["360x640", "1366x768"])
def test_axe_finds_nothing_on_the_page(open_screen, floor, device):
    screen = open_screen(floor["alice"], **device)
    page = screen.page
    mobile = device["mobile"]
    expect(card(page, "Stock-out E-05-02")).to_be_visible()
    expect(page.locator("#notice-list .notice-card")).to_have_count(1)
    expect(page.locator("#chat-unread")).to_have_text("1")
    found: dict[str, list[str]] = {}

    def check(state: str) -> None:
        problems = violations(page)
        if problems:
            found[state] = problems

    check("the list with a notice pinned")

    page.locator("#bell-button").click()
    expect(page.locator("#notification-panel")).to_be_visible()
    expect(page.locator("#unread-list .summary").first).to_be_visible()
    check("the bell's panel")
    page.locator("#bell-button").click()
    expect(page.locator("#notification-panel")).to_be_hidden()

    card(page, "Stock-out E-05-02").locator(".inbox-item").click()
    dialog = page.locator("#notification-dialog")
    expect(dialog.locator("[data-alert-action]")).to_be_visible()
    page.locator("#dialog-history-toggle").click()
    expect(page.locator("#dialog-history li").first).to_be_visible()
    check("an alert's dialog with its history")
    dialog.locator("[data-alert-action]").click()
    expect(page.locator("#action-scan")).to_be_focused()
    check("the scan dialog")
    page.keyboard.press("Escape")
    expect(page.locator("#action-dialog")).to_be_hidden()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.locator("#notice-list .notice-roster-button").click()
    expect(page.locator("#roster-dialog .roster-row")).to_have_count(2)
    check("a notice's roster")
    page.keyboard.press("Escape")
    expect(page.locator("#roster-dialog")).to_be_hidden()

    page.locator("#chat-button").click()
    expect(page.locator("#chat-list [data-chat-id]")).to_have_count(1)
    check("the chat's list")
    page.locator("#chat-list [data-chat-id]").click()
    expect(page.locator("#message-list .message")).to_have_count(1)
    check("a conversation")
    page.locator("#chat-panel .chat-view[data-view=conversation] .chat-back").click()
    page.locator("#chat-new").click()
    page.locator("#contact-input").fill("b")
    expect(page.locator("#contact-options [role=option]").first).to_be_visible()
    check("a new chat with its contact options")
    page.locator("#chat-panel .chat-view:not([hidden]) .chat-close").click()
    expect(page.locator("#chat-panel")).to_be_hidden()

    if mobile:
        page.locator("#account-button").click()
        expect(page.locator("#language-select")).to_be_visible()
        check("the account menu")

    report(f"page-{device['size'][0]}", found)
    assert found == {}, f"axe-core's violations: {found}"
    # What axe asked for, said plainly: the page's heading, the warehouse picker's name.
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    expect(page.get_by_role("combobox", name="Warehouse", exact=True)).to_be_visible()


@pytest.mark.parametrize("device", [HANDHELD, DESKTOP], ids=["360x640", "1366x768"])
def test_esc_closes_each_panel_and_focus_goes_back(open_screen, floor, device):
    screen = open_screen(floor["alice"], **device)
    page = screen.page
    critical = card(page, "Stock-out E-05-02").locator(".inbox-item")
    expect(critical).to_be_visible()

    # An alert's dialog, from its card: opening it reads the alert, and the card is redrawn.
    press(critical)
    dialog = page.locator("#notification-dialog")
    expect(dialog).to_be_visible()
    expect(critical).to_have_class(re.compile(r"\bis-read\b"))  # redrawn meanwhile
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert_focused(page, critical, "the card's button")

    # The scan dialog over it: back to the action's button, then to the card.
    press(critical)
    action = dialog.locator("[data-alert-action]")
    expect(action).to_be_visible()
    press(action)
    expect(page.locator("#action-scan")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#action-dialog")).to_be_hidden()
    expect(dialog).to_be_visible()
    assert_focused(page, dialog.locator("[data-alert-action]"), "the action's button")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert_focused(page, critical, "the card's button")

    # The dialog's own close button does the same.
    press(card(page, "Check dock 1").locator(".inbox-item"))
    press(dialog.locator(".dialog-close"))
    expect(dialog).to_be_hidden()
    assert_focused(page, card(page, "Check dock 1").locator(".inbox-item"), "the card's button")

    # The bell's panel, and an alert opened from it: read, it leaves the panel, so focus goes
    # to the bell; Esc again closes the panel.
    bell = page.locator("#bell-button")
    panel = page.locator("#notification-panel")
    press(bell)
    expect(panel).to_be_visible()
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert_focused(page, bell, "the bell")
    press(bell)
    summary = panel.locator("#unread-list .summary").first
    expect(summary).to_be_visible()
    press(summary)
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert_focused(page, bell, "the bell")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert_focused(page, bell, "the bell")

    # A notice's roster.
    roster = page.locator("#notice-list .notice-roster-button")
    press(roster)
    expect(page.locator("#roster-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#roster-dialog")).to_be_hidden()
    assert_focused(page, roster, "the notice's roster button")

    # The chat: Esc closes it from its list, from a new chat (the contact options first) and
    # from a conversation; so does its close button.
    chat_button = page.locator("#chat-button")
    chat = page.locator("#chat-panel")
    shown_view = "#chat-panel .chat-view:not([hidden])"
    press(chat_button)
    expect(chat).to_be_visible()
    page.keyboard.press("Escape")
    expect(chat).to_be_hidden()
    assert_focused(page, chat_button, "the chat button")

    press(chat_button)
    press(page.locator("#chat-new"))
    page.locator("#contact-input").fill("b")
    expect(page.locator("#contact-options [role=option]").first).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#contact-options")).to_be_hidden()
    expect(chat).to_be_visible()
    page.keyboard.press("Escape")
    expect(chat).to_be_hidden()
    assert_focused(page, chat_button, "the chat button")

    press(chat_button)
    press(page.locator(f"{shown_view} .chat-back"))
    press(page.locator("#chat-list [data-chat-id]"))
    expect(page.locator("#message-input")).to_be_focused()
    page.keyboard.press("Escape")
    expect(chat).to_be_hidden()
    assert_focused(page, chat_button, "the chat button")

    press(chat_button)
    press(page.locator(f"{shown_view} .chat-close"))
    expect(chat).to_be_hidden()
    assert_focused(page, chat_button, "the chat button")

    if device["mobile"]:
        account = page.locator("#account-button")
        press(account)
        expect(page.locator("#language-select")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("#language-select")).to_be_hidden()
        assert_focused(page, account, "the account button")


# --- the admin -------------------------------------------------------------------------------


@pytest.fixture
def admin_user(make_user) -> User:
    return make_user("admin", is_staff=True, is_superuser=True)

    return make_user("admin", is_staff=True, is_superuser=True)


# Apps whose admins are the product's (its own admins of Django's users and groups included;
# not those of DRF's tokens or django-axes).
PRODUCT_ADMINS = {
    "subscriptions",
    "notifications",
    "push",
    "shifts",
    "outbox",
    "actions",
    "notices",
    "inventory",
}

# What axe-core finds in the admin that comes from Django's own templates, widgets and scripts,
# which the product cannot change (short of copying them): rule -> the elements it is about.
# Only these elements are let through, for only that rule; anything else fails the test.
DJANGO_OWN = {
    # SelectFilter2.js (filter_horizontal: a role's permissions, a user's groups) puts
    # aria-label on the <span> of its search icon, an element that may not have one.
    "aria-prohibited-attr": ".selector .help-tooltip.search-label-icon",
    # admin/edit_inline/tabular.html: the empty header over the column of each row's own
    # object, and each row's "Delete?" checkbox, labelled only by its column's header.
    "empty-table-header": ".tabular thead th.original",
    "label": (
        ".tabular td.delete input[type=checkbox], "
        # admin/widgets/split_datetime.html: "Date:" and "Time:" are text, not <label>s, and
        # the row's label points at neither input (a MultiWidget has no one id); the form
        # renderer takes this template from django.contrib.admin, not from the project.
        "p.datetime input, "
        # The select2 that Django bundles for autocomplete_fields: its inline search box.
        ".select2-container .select2-search__field"
    ),
    # The same select2: its combobox is named by its empty "rendered" <span> when nothing is
    # chosen, and its multiple choice is a <ul> holding a search <li> select2 builds itself.
    "aria-input-field-name": (
        ".select2-container .select2-selection, .select2-container .select2-selection__rendered"
    ),
    "list": ".select2-container .select2-selection__rendered",
}

OWN_NODES = """
([target, selector]) => {
  const element = document.querySelector(target);
  return Boolean(element && element.matches(selector));
}
"""


def product_violations(page: Page) -> list[str]:
    """axe-core's violations on an admin page, less the elements DJANGO_OWN lets through."""
    results = AXE.run(page)
    found = []
    for violation in results.response["violations"]:
        allowed = DJANGO_OWN.get(violation["id"])
        targets = [
            node["target"]
            for node in violation["nodes"]
            if not (allowed and page.evaluate(OWN_NODES, [node["target"][0], allowed]))
        ]
        if targets:
            found.append(f"{violation['id']} ({violation['impact']}): {targets}")
    return found


def product_admin_pages() -> list[str]:
    """The changelist of every model the product registers in its admin."""
    from django.contrib import admin

    return sorted(
        f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for model, model_admin in admin.site._registry.items()
        if type(model_admin).__module__.split(".")[0] in PRODUCT_ADMINS
    )


# Change forms (of an object that exists) the test must have seen, at the least.
CHANGE_FORMS = [
    "subscriptions/warehouse",
    "subscriptions/messagetype",
    "subscriptions/subscription",
    "actions/alertaction",
    "notices/notice",
    "shifts/shift",
    "auth/group",
    "auth/user",
]


def test_axe_finds_nothing_in_the_admin(
    open_screen, live_server, admin_user, floor, warehouse, role
):
    Shift.objects.create(
        warehouse=warehouse, role=role, name="Early", starts=dt.time(6), ends=dt.time(14)
    )
    screen = open_screen(admin_user, path="/admin/", **DESKTOP)
    page = screen.page
    found: dict[str, list[str]] = {}
    seen: list[str] = []

    def check() -> None:
        expect(page.locator("#content")).to_be_visible()
        path = page.url.removeprefix(live_server.url)
        seen.append(path)
        problems = product_violations(page)
        if problems:
            found[path] = problems

    check()  # the index
    pages = product_admin_pages()
    assert len(pages) >= 15
    for changelist in pages:
        page.goto(live_server.url + changelist)
        check()
        # The first object's form, or the form for a new one.
        first = page.locator("#result_list tbody tr").first.locator("a[href]").first
        if first.count():
            first.click()
        elif page.locator(".object-tools .addlink").count():
            page.locator(".object-tools .addlink").click()
        else:
            continue
        check()
    report("admin", found)
    assert found == {}, f"axe-core's violations in the admin: {found}"
    for model in CHANGE_FORMS:
        assert any(re.fullmatch(rf"/admin/{model}/\d+/change/", path) for path in seen), model
