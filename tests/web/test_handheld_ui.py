"""The page on a handheld (SPEC 12), in Chromium with mobile emulation (touch: tap, not click)
at 360x640, and the same checks at 1366x768: nothing overflows sideways, every control is
reachable and at least 44x44 CSS px, at least 4 alerts on one screen, the filters, expandable
bodies, and toasts that never cover the list's buttons and belong to the shown warehouse."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Locator, Page, expect

from notifications import lifecycle
from subscriptions.models import Subscription, Warehouse
from tests.web.conftest import notify

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD = {"size": (360, 640), "mobile": True}
DESKTOP = {"size": (1366, 768), "mobile": False}
MIN_TARGET = 44  # CSS px, each way

LONG_BODY = (
    "Stock is -12 after wave 8812. The pick face is empty and two pickers are waiting at "
    "aisle A; take the pallet from reserve location R-07-02-1, not from overflow."
)


@pytest.fixture
def crew(
    make_user, role: Group, warehouse: Warehouse, other_warehouse: Warehouse, rep_notice
) -> list[User]:
    """alice and bob, whose Replenishment role receives REP_NOTICE in SH01 and BJ02."""
    for wh in (warehouse, other_warehouse):
        Subscription.objects.create(message_type=rep_notice, warehouse=wh, role=role)
    return [make_user("alice", role), make_user("bob", role)]


@pytest.fixture
def shift(crew, warehouse) -> dict[str, str]:
    """A morning's alerts in SH01: two open (one critical), one claimed by alice, one by bob,
    one resolved, and more open ones below."""
    alice, bob = crew
    ids = {
        "resolved": notify(warehouse, "Count aisle C", body="Cycle count"),
        "bob": notify(warehouse, "Replenish D-04-01", body="Stock is -3"),
        "mine": notify(warehouse, "Replenish B-02-01", body="Stock is -5", severity="warning"),
    }
    for n in range(3):
        ids[f"more{n}"] = notify(warehouse, f"Check dock {n + 1}", body="Door sensor")
    ids["open"] = notify(warehouse, "Replenish A-01-03", body=LONG_BODY)
    ids["critical"] = notify(
        warehouse, "Stock-out E-05-02", body="Pickers waiting", severity="critical"
    )
    for who, key in ((alice, "mine"), (bob, "bob")):
        lifecycle.claim(user=who, warehouse_id=warehouse.pk, notification_id=ids[key])
    lifecycle.resolve(user=bob, warehouse_id=warehouse.pk, notification_id=ids["resolved"])
    return ids


def entry(page: Page, title: str) -> Locator:
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def titles(page: Page) -> list[str]:
    return page.locator("#inbox-list .inbox-item-title").all_inner_texts()


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not displayed"
    return {"x": found["x"], "y": found["y"], "width": found["width"], "height": found["height"]}


def assert_within(b: dict[str, float], width: int, what: str) -> None:
    """On screen horizontally: nothing to scroll sideways to."""
    assert b["x"] >= 0, f"{what} starts left of the screen: {b}"
    assert b["x"] + b["width"] <= width + 0.5, f"{what} ends right of the screen: {b}"


def assert_big_enough(b: dict[str, float], what: str) -> None:
    assert b["width"] >= MIN_TARGET, f"{what} is too narrow: {b}"
    assert b["height"] >= MIN_TARGET, f"{what} is too low: {b}"


def assert_reachable(locator: Locator, width: int, what: str) -> None:
    """On screen horizontally and at least 44x44."""
    expect(locator).to_be_visible()
    b = box(locator)
    assert_within(b, width, what)
    assert_big_enough(b, what)


def assert_no_sideways_overflow(page: Page, width: int) -> None:
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide on a {width} px screen"


def tap(locator: Locator, mobile: bool) -> None:
    locator.tap() if mobile else locator.click()


@pytest.mark.parametrize(
    ("device", "locale"),
    [(HANDHELD, "en-US"), (HANDHELD, "zh-CN"), (DESKTOP, "en-US")],
    ids=["360x640-en", "360x640-zh", "1366x768-en"],
)
def test_everything_fits_and_is_reachable(open_screen, shift, crew, device, locale):
    width, height = device["size"]
    mobile = device["mobile"]
    screen = open_screen(crew[0], locale=locale, **device)
    page = screen.page
    if locale == "zh-CN":
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    entries = page.locator("#inbox-list .inbox-entry")
    expect(entries).to_have_count(7)  # everything but the resolved one
    expect(page.locator("#delivery-mode")).to_be_visible()
    name = f"{width}x{height}-{locale}"
    screen.shot(f"40-handheld-{name}")

    assert_no_sideways_overflow(page, width)
    for selector in ("#warehouse-select", "#bell-button", "#chat-button"):
        assert_reachable(page.locator(selector), width, selector)
    for index in range(page.locator(".filters .filter").count()):
        assert_reachable(page.locator(".filters .filter").nth(index), width, "a filter")
    on_screen = 0
    for index in range(entries.count()):
        item = entries.nth(index)
        b = box(item)
        if b["y"] >= 0 and b["y"] + b["height"] <= height:
            on_screen += 1
        for part in (".inbox-item", ".item-actions button", ".inbox-item-body"):
            for n in range(item.locator(part).count()):
                assert_reachable(item.locator(part).nth(n), width, f"{part} of alert {index}")
    assert on_screen >= 4, f"only {on_screen} alerts fit on a {width}x{height} screen"
    # The delivery mode's pill stays on one line (in Chinese too).
    assert box(page.locator("#delivery-mode"))["height"] < 30

    # Language and sign-out: behind the account button on a handheld, inline on a desktop.
    if mobile:
        assert_reachable(page.locator("#account-button"), width, "the account button")
        expect(page.locator("#language-select")).to_be_hidden()
        page.locator("#account-button").tap()
    for selector in ("#language-select", ".sign-out"):
        assert_reachable(page.locator(selector), width, selector)
    if mobile:
        screen.shot(f"41-account-menu-{name}")
        page.locator("#account-button").tap()
        expect(page.locator("#language-select")).to_be_hidden()

    # The bell's panel opens within the screen, its buttons reachable.
    tap(page.locator("#bell-button"), mobile)
    panel = page.locator("#notification-panel")
    expect(panel).to_be_visible()
    assert_within(box(panel), width, "the bell's panel")
    assert_reachable(page.locator("#mark-all-read"), width, "mark all read")
    assert_no_sideways_overflow(page, width)
    screen.shot(f"42-bell-panel-{name}")
    tap(page.locator("#bell-button"), mobile)
    expect(panel).to_be_hidden()

    # The chat panel, and the way back out of it.
    tap(page.locator("#chat-button"), mobile)
    chat = page.locator("#chat-panel")
    expect(chat).to_be_visible()
    assert_within(box(chat), width, "the chat panel")
    assert_reachable(page.locator("#chat-new"), width, "new chat")
    close = page.locator("#chat-panel .chat-view:not([hidden]) .chat-close")
    assert_reachable(close, width, "close chats")
    tap(close, mobile)
    expect(chat).to_be_hidden()

    # One alert's dialog: its buttons reachable too.
    tap(entry(page, "Replenish A-01-03").locator(".inbox-item"), mobile)
    dialog = page.locator("#notification-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("[data-action=claim]")).to_be_visible()
    rects = page.evaluate(
        """[...document.querySelectorAll("#notification-dialog button")]
             .map((b) => b.getBoundingClientRect()).filter((r) => r.width > 0)
             .map((r) => ({x: r.x, width: r.width, height: r.height}))"""
    )
    assert len(rects) >= 4  # close, claim, resolve, history
    for rect in rects:
        assert_within(rect, width, "a dialog button")
        assert_big_enough(rect, "a dialog button")
    assert_no_sideways_overflow(page, width)
    screen.shot(f"43-dialog-{name}")


def test_filters_and_the_resolved_ones_apart(open_screen, shift, crew):
    alice, _ = crew
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(7)
    assert "Count aisle C" not in titles(page)  # resolved: out of the default view

    def show(name: str) -> list[str]:
        page.locator(f".filters [data-filter={name}]").tap()
        expect(page.locator(f".filters [data-filter={name}]")).to_have_attribute(
            "aria-pressed", "true"
        )
        return sorted(titles(page))

    assert show("open") == [
        "Check dock 1", "Check dock 2", "Check dock 3", "Replenish A-01-03", "Stock-out E-05-02",
    ]  # fmt: skip
    assert show("mine") == ["Replenish B-02-01"]
    assert show("critical") == ["Stock-out E-05-02"]
    assert show("resolved") == ["Count aisle C"]
    expect(entry(page, "Count aisle C")).to_contain_text("Resolved by bob")
    screen.shot("44-resolved-filter")

    # Claiming under Open moves it to Mine; resolving takes it out of All, into Resolved.
    show("open")
    entry(page, "Replenish A-01-03").get_by_role("button", name="Claim", exact=True).tap()
    expect(entry(page, "Replenish A-01-03")).to_have_count(0)
    assert show("mine") == ["Replenish A-01-03", "Replenish B-02-01"]
    entry(page, "Replenish B-02-01").get_by_role("button", name="Resolve", exact=True).tap()
    expect(entry(page, "Replenish B-02-01")).to_have_count(0)
    show("all")
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(6)
    assert show("resolved") == ["Count aisle C", "Replenish B-02-01"]

    # The choice is remembered across a reload.
    page.reload()
    expect(page.locator(".filters [data-filter=resolved]")).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(2)


def test_a_body_expands_in_place(open_screen, shift, crew):
    screen = open_screen(crew[0], **HANDHELD)
    page = screen.page
    body = entry(page, "Replenish A-01-03").locator(".inbox-item-body")
    expect(body).to_have_attribute("aria-expanded", "false")
    folded = box(body)["height"]
    assert folded < 50  # one line

    body.tap()

    expect(body).to_have_attribute("aria-expanded", "true")
    assert box(body)["height"] > folded + 30  # the whole text, on several lines
    expect(body).to_have_text(LONG_BODY)
    expect(page.locator("#notification-dialog")).to_be_hidden()  # expanding does not open it
    assert_no_sideways_overflow(page, 360)
    screen.shot("45-body-expanded")
    body.tap()
    expect(body).to_have_attribute("aria-expanded", "false")


COVERED_BUTTONS = """
() => {
  // Buttons of the list whose centre is on screen but under something else (a toast).
  const covered = [];
  for (const button of document.querySelectorAll("#inbox-list button")) {
    const r = button.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (y < 0 || y > window.innerHeight || x < 0 || x > window.innerWidth) continue;
    const top = document.elementFromPoint(x, y);
    if (top && top !== button && !button.contains(top) && top.closest(".toast")) {
      covered.push(button.textContent.trim());
    }
  }
  return covered;
}
"""


@pytest.mark.parametrize("device", [HANDHELD, DESKTOP], ids=["360x640", "1366x768"])
def test_toasts_cover_nothing_and_belong_to_the_shown_warehouse(
    open_screen, shift, crew, warehouse, other_warehouse, device
):
    screen = open_screen(crew[0], **device)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(7)
    notify(warehouse, "Replenish F-06-01", body="Stock is -1")
    toast = page.locator(".toast")
    expect(toast).to_contain_text("New: Replenish F-06-01")
    screen.shot(f"46-toast-{device['size'][0]}")
    assert page.evaluate(COVERED_BUTTONS) == []
    toast_box = box(toast)
    for index in range(page.locator("#inbox-list .inbox-entry").count()):
        b = box(page.locator("#inbox-list .inbox-entry").nth(index))
        overlaps = (
            b["y"] < toast_box["y"] + toast_box["height"]
            and toast_box["y"] < b["y"] + b["height"]
            and b["y"] > box(page.locator(".topbar"))["height"]
        )
        assert not overlaps, "a toast lies over an alert"
    # A toast that can be tapped is a 44 px target too.
    assert box(toast.locator(".toast-body"))["height"] >= MIN_TARGET

    page.locator("#warehouse-select").select_option(str(other_warehouse.pk))

    expect(page.locator(".toast")).to_have_count(0)  # SH01's news left with SH01
    expect(page.locator("#inbox-empty")).to_be_visible()  # BJ02 loaded: news from now on
    notify(warehouse, "Replenish G-07-01")  # not shown: another warehouse
    notify(other_warehouse, "Beijing needs you")
    expect(page.locator(".toast")).to_contain_text("New: Beijing needs you")
    expect(page.locator(".toast")).to_have_count(1)
    assert page.locator(".toast").get_attribute("data-warehouse") == str(other_warehouse.pk)


def summary_titles(page: Page) -> list[str]:
    return page.locator("#unread-list .summary-title").all_inner_texts()


def test_open_critical_alerts_come_first_in_the_list_the_bell_and_live(
    open_live_screen, crew, warehouse, clock
):
    """A critical published before four info alerts sits on top, not fifth; the bell's panel
    has the same order, and the stream inserts a live critical at the top of the criticals and
    a live info after them. A claimed critical is no longer first."""
    alice, bob = crew
    minute = 60_000
    clock.move_by(-5 * minute)
    critical = notify(warehouse, "Stock-out E-05-02", body="Pickers waiting", severity="critical")
    for n in range(4):
        clock.move_by((n - 4) * minute)
        notify(warehouse, f"Check dock {n + 1}", body="Door sensor")
    clock.move_by(0)
    screen = open_live_screen(alice, **HANDHELD)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(5)
    expect(page.locator("#delivery-mode")).to_have_text("Live")
    first = ["Stock-out E-05-02", "Check dock 4", "Check dock 3", "Check dock 2", "Check dock 1"]
    assert titles(page) == first
    assert box(entry(page, "Stock-out E-05-02"))["y"] < 640 / 2  # on the first screen

    page.locator(".filters [data-filter=open]").tap()
    expect(page.locator(".filters [data-filter=open]")).to_have_attribute("aria-pressed", "true")
    assert titles(page) == first
    page.locator("#bell-button").tap()
    expect(page.locator("#unread-list .summary")).to_have_count(5)
    assert summary_titles(page) == first

    notify(warehouse, "Stock-out F-06-01", body="Pickers waiting", severity="critical")
    notify(warehouse, "Check dock 5", body="Door sensor")

    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(7)
    live = ["Stock-out F-06-01", "Stock-out E-05-02", "Check dock 5", "Check dock 4"]
    assert titles(page)[:4] == live
    expect(page.locator("#unread-list .summary")).to_have_count(5)
    assert summary_titles(page) == [*live, "Check dock 3"]
    screen.shot("47-critical-first")
    page.locator("#bell-button").tap()
    expect(page.locator("#notification-panel")).to_be_hidden()

    # Claimed, it is no longer open: it takes its place by time.
    lifecycle.claim(user=bob, warehouse_id=warehouse.pk, notification_id=critical)
    expect(entry(page, "Stock-out E-05-02")).to_have_count(0)  # Open shows open ones only
    page.locator(".filters [data-filter=all]").tap()
    expect(entry(page, "Stock-out E-05-02")).to_contain_text("Claimed by bob")
    assert titles(page) == [
        "Stock-out F-06-01", "Check dock 5", "Check dock 4", "Check dock 3", "Check dock 2",
        "Check dock 1", "Stock-out E-05-02",
    ]  # fmt: skip


WHOLE_TEXT = """
(element) => {
  // What keeps this text from being read in full: shortened with an ellipsis, cut by a box
  // that hides its overflow, off the screen, or a word broken over two lines.
  const problems = [];
  const r = element.getBoundingClientRect();
  if (element.scrollWidth > element.clientWidth + 1) problems.push("shortened");
  if (r.left < 0 || r.right > window.innerWidth + 0.5) problems.push("off the screen");
  for (let box = element.parentElement; box; box = box.parentElement) {
    const style = getComputedStyle(box);
    if (style.overflowX === "visible" && style.overflowY === "visible") continue;
    const b = box.getBoundingClientRect();
    if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5
        || r.bottom > b.bottom + 0.5) {
      problems.push(`cut by .${box.className}`);
    }
  }
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      if (range.getClientRects().length > 1) problems.push(`"${word[0]}" broken`);
    }
  }
  return problems;
}
"""


def assert_whole(locator: Locator, text: str) -> None:
    expect(locator).to_have_text(text)
    assert locator.evaluate(WHOLE_TEXT) == [], f"{text!r} cannot be read in full"


def test_a_cards_status_is_never_cut(open_screen, crew, warehouse, make_user, role, rep_notice):
    """The status of a card ("Claimed by …", "Snoozed until …", "Waiting for the network") is
    read in full on a 360 px card next to a critical's chips: wrapped, never cut mid-word."""
    alice, bob = crew
    rep_notice.name_en = "Replenishment notice"
    rep_notice.save()
    rosalind = make_user("rosalind.mcallister", role)
    claimed = notify(warehouse, "Stock-out E-05-02", body="Pickers waiting", severity="critical")
    long_claim = notify(warehouse, "Stock-out E-05-03", body="Pickers waiting", severity="critical")
    snoozed = notify(warehouse, "Replenish B-02-01", body="Stock is -5", severity="warning")
    notify(warehouse, "Replenish A-01-03", body=LONG_BODY, severity="critical")
    lifecycle.claim(user=alice, warehouse_id=warehouse.pk, notification_id=claimed)
    lifecycle.claim(user=rosalind, warehouse_id=warehouse.pk, notification_id=long_claim)
    lifecycle.snooze(
        user=bob,
        warehouse_id=warehouse.pk,
        notification_id=snoozed,
        until=int(time.time() * 1000) + 5 * 3_600_000,
    )
    screen = open_screen(bob, **HANDHELD)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(3)

    assert_whole(entry(page, "Stock-out E-05-02").locator(".status-text"), "Claimed by alice")
    assert_whole(
        entry(page, "Stock-out E-05-03").locator(".status-text"),
        "Claimed by rosalind.mcallister",
    )

    page.context.set_offline(True)
    open_one = entry(page, "Replenish A-01-03")
    open_one.get_by_role("button", name="Claim", exact=True).tap()
    assert_whole(open_one.locator(".queued-flag"), "Waiting for the network")
    assert_whole(open_one.locator(".status-text"), "Claimed by bob")
    assert_no_sideways_overflow(page, 360)
    screen.shot("48-status-whole")

    page.locator(".filters [data-filter=snoozed]").tap()
    flag = entry(page, "Replenish B-02-01").locator(".snoozed-flag")
    expect(flag).to_contain_text("Snoozed until")
    assert_whole(flag, flag.inner_text())
    page.context.set_offline(False)
