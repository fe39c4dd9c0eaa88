"""The handover on a handheld (SPEC 12, 13): sentences in the user's language with the
outgoing shift's counts (snoozed included) and links to each alert, and Accept."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from config import timestamps
from notifications import lifecycle
from notifications.services import publish
from shifts.models import Handover
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.handovers import end_shift
from tests.web.conftest import assert_tappable

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD = {"size": (360, 640), "mobile": True}
WIDTH = 360  # HANDHELD's width

# What the lead reads, in each language: the card's title and the sentences of its summary.
READS = {
    "en-US": {
        "title": "Shift handover: Early (Replenishment)",
        "sentences": [
            "2 alerts are still open.",
            "1 alert was claimed by someone going off shift.",
            "0 alerts were escalated during the shift.",
            "1 alert is snoozed past the change.",
            "0 alerts were resolved during the shift.",
        ],
        "accept": "Accept handover",
    },
    "zh-CN": {
        "title": "交接班：Early（Replenishment）",  # noqa: RUF001 (Chinese punctuation)
        "sentences": [
            "2 条提醒仍待处理。",
            "1 条提醒由下班的人认领。",
            "本班有 0 条提醒被升级。",
            "1 条提醒暂缓到换班之后。",
            "本班解决了 0 条提醒。",
        ],
        "accept": "接班",
    },
}


@pytest.fixture
def handed_over(
    make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType
) -> tuple[User, Handover]:
    """alice's role had a shift that ended a minute ago, leaving one open alert: handed over."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    alice = make_user("alice", role)
    publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")
    return alice, end_shift(warehouse, role)


@pytest.fixture
def busy_handover(
    make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType
) -> tuple[User, Handover]:
    """The Early shift leaves the lead alice one open alert, one bob snoozed past the change
    and one bob held as he went off shift (given back to open)."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    alice, bob = make_user("alice", role), make_user("bob", role)

    def send(title: str) -> str:
        return publish(message_type=rep_notice, warehouse=warehouse, title=title).id

    send("Replenish A-01-03")
    snoozed = send("Check dock 2")
    held = send("Replenish B-02-01")
    lifecycle.snooze(
        user=bob,
        warehouse_id=warehouse.pk,
        notification_id=snoozed,
        until=timestamps.now_ms() + 2 * 3_600_000,
    )
    lifecycle.claim(user=bob, warehouse_id=warehouse.pk, notification_id=held)
    return alice, end_shift(warehouse, role)


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_handover_reads_as_sentences_with_links_to_its_alerts(
    open_screen, busy_handover, locale
):
    alice, _handover = busy_handover
    reads = READS[locale]
    screen = open_screen(alice, locale=locale, **HANDHELD)
    page = screen.page
    card = page.locator("#inbox-list .handover-card")
    expect(card).to_have_count(1)
    expect(card.locator(".inbox-item-title")).to_have_text(reads["title"])
    for sentence in reads["sentences"]:
        expect(card).to_contain_text(sentence)
    expect(card.get_by_role("button", name=reads["accept"], exact=True)).to_be_visible()
    # Its summary is one line until tapped, like any body; then every sentence shows.
    summary = card.locator(".inbox-item-body")
    summary.tap()
    expect(summary).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#notification-dialog")).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screen.shot(f"62-handover-card-{locale}")

    card.locator(".inbox-item").tap()
    dialog = page.locator("#notification-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#dialog-title")).to_have_text(reads["title"])
    for sentence in reads["sentences"]:
        expect(dialog).to_contain_text(sentence)
    # Each alert it names is a link under its sentence, the snoozed one too; no raw data.
    sections = dialog.locator(".handover-section")
    expected = {0: ["Replenish A-01-03", "Check dock 2"], 1: ["Replenish B-02-01"]}
    expected[3] = ["Check dock 2"]
    for index, sentence in enumerate(reads["sentences"]):
        section = sections.filter(has_text=sentence)
        links_there = section.locator("a.handover-alert")
        expect(links_there).to_have_count(len(expected.get(index, [])))
        for title in expected.get(index, []):
            expect(links_there.filter(has_text=title)).to_have_count(1)
    links = dialog.locator("a.handover-alert")
    text = dialog.inner_text()
    assert "handover_id" not in text
    assert "{" not in text
    assert "counts" not in text
    for index in range(links.count()):
        assert_tappable(links.nth(index).bounding_box(), "a link to an alert", screen=WIDTH)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screen.shot(f"63-handover-dialog-{locale}")

    # A link opens that alert.
    sections.filter(has_text=reads["sentences"][3]).locator("a.handover-alert").tap()
    expect(dialog.locator("#dialog-title")).to_have_text("Check dock 2")
    expect(dialog.locator("a.handover-alert")).to_have_count(0)


def test_the_handover_card_is_accepted_once(open_screen, handed_over):
    alice, handover = handed_over
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    card = page.locator("#inbox-list .handover-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Shift handover: Early (Replenishment)")
    expect(card).to_contain_text("1 alert is still open.")
    accept = card.get_by_role("button", name="Accept handover")
    expect(accept).to_be_visible()
    box = accept.bounding_box()
    assert box is not None
    assert box["width"] >= 44
    assert box["height"] >= 44
    assert card.get_by_role("button", name="Claim", exact=True).count() == 0
    screen.shot("60-handover-card")

    accept.tap()
    # Accepted is done: the card leaves the default view and shows under Resolved.
    expect(page.locator("#inbox-list .handover-card")).to_have_count(0)
    handover.refresh_from_db()
    assert handover.accepted_by_id == alice.pk
    page.locator(".filters [data-filter=resolved]").tap()
    expect(page.locator("#inbox-list .handover-card")).to_contain_text("Accepted by alice")
    screen.shot("61-handover-accepted")
