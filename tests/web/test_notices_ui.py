"""Notices on a handheld (SPEC 12, 15): pinned above the alerts with "I have read this" (44 px,
in the user's language, the text shown as text), acknowledged with a tap; the roster for
those allowed to see it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from notices import services
from notices.models import Notice, NoticeAck
from subscriptions.models import Warehouse
from tests.web.conftest import assert_tappable

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD = {"size": (360, 640), "mobile": True}
WIDTH = 360

READS = {
    "en-US": {"ack": "I have read this", "heading": "Please read"},
    "zh-CN": {"ack": "我已阅读", "heading": "请阅读"},
}


def publish_notice(warehouse: Warehouse, role: Group, by: User, **extra) -> Notice:
    fields = {
        "warehouse": warehouse,
        "title": "Forklift lane B closed",
        "body": "Use lane C <b>until</b> Friday.",
        "severity": "warning",
        "roles": [role],
        "users": [],
        **extra,
    }
    return services.notice_create(user=by, **fields)


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_notice_is_pinned_above_the_alerts_and_acknowledged_with_a_tap(
    open_screen, make_user, role, warehouse, locale
):
    alice = make_user("alice", role)
    notice = publish_notice(warehouse, role, make_user("otto"))
    reads = READS[locale]
    screen = open_screen(alice, locale=locale, **HANDHELD)
    page = screen.page

    card = page.locator("#notice-list .notice-card")
    expect(card).to_have_count(1)
    expect(page.locator("#notices-title")).to_have_text(reads["heading"])
    expect(card.locator(".notice-title")).to_have_text("Forklift lane B closed")
    expect(card.locator(".notice-body")).to_have_text("Use lane C <b>until</b> Friday.")  # text
    assert card.locator(".notice-body b").count() == 0
    # Pinned above the alerts: the card comes before the filters and the list.
    card_box = card.bounding_box()
    filters_box = page.locator(".filters").bounding_box()
    assert card_box is not None
    assert filters_box is not None
    assert card_box["y"] + card_box["height"] <= filters_box["y"]
    ack = card.get_by_role("button", name=reads["ack"], exact=True)
    expect(ack).to_be_visible()
    assert_tappable(ack.bounding_box(), "I have read this", screen=WIDTH, narrowest=44)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screen.shot(f"70-notice-pinned-{locale}")

    ack.tap()
    expect(page.locator("#notice-list .notice-card")).to_have_count(0)
    expect(page.locator("#notices")).to_be_hidden()
    [record] = NoticeAck.objects.filter(notice=notice)
    assert (record.user_id, record.version) == (alice.pk, 1)


def test_a_new_version_is_pinned_again(open_screen, make_user, role, warehouse):
    alice = make_user("alice", role)
    notice = publish_notice(warehouse, role, make_user("otto"))
    services.notice_ack(user=alice, notice_id=notice.pk, version=1)
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-item").first).to_be_visible()
    expect(page.locator("#notice-list .notice-card")).to_have_count(0)

    services.notice_update(notice_id=notice.pk, changes={"body": "Use lane D until Friday."})
    card = page.locator("#notice-list .notice-card")
    expect(card).to_have_count(1)  # by the next poll
    expect(card).to_contain_text("Use lane D until Friday.")
    expect(card).to_contain_text("Changed: version 2")


def test_the_escalation_role_sees_the_roster(open_screen, make_user, role, warehouse):
    leads = Group.objects.create(name="Leads")
    lena = make_user("lena", leads)
    make_user("alice", role)
    bob = make_user("bob", role)
    notice = publish_notice(warehouse, role, make_user("otto"), escalation_role=leads)
    services.notice_ack(user=bob, notice_id=notice.pk, version=1)
    screen = open_screen(lena, **HANDHELD)
    page = screen.page

    button = page.locator("#notice-rosters").get_by_role("button", name="Who has read it")
    expect(button).to_be_visible()
    assert_tappable(button.bounding_box(), "Who has read it", screen=WIDTH, narrowest=44)
    button.tap()
    dialog = page.locator("#roster-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#roster-summary")).to_have_text(
        "Version 1: 1 of 2 have read it, 1 missing."
    )
    rows = dialog.locator(".roster-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("alice")
    expect(rows.nth(0)).to_contain_text("Not read yet")
    expect(rows.nth(0)).to_contain_text("On shift")
    expect(rows.nth(1)).to_contain_text("bob")
    expect(dialog.locator("#roster-csv")).to_have_attribute(
        "href", f"/api/v1/notices/{notice.pk}/roster/?format=csv"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screen.shot("71-notice-roster")


def inbox_entry(page, text: str):
    return page.locator("#inbox-list .inbox-entry", has_text=text)


@pytest.mark.parametrize("size", [HANDHELD, {"size": (1366, 768)}], ids=["handheld", "desktop"])
def test_a_notice_is_one_thing_to_clear(open_screen, make_user, role, warehouse, size):
    """Its card offers no Claim or Resolve; "I have read this" also reads the card and the
    badge drops."""
    alice = make_user("alice", role)
    publish_notice(warehouse, role, make_user("otto"))
    screen = open_screen(alice, **size)
    page = screen.page
    card = inbox_entry(page, "Forklift lane B closed")
    expect(card).to_have_count(1)
    expect(page.locator("#unread-count")).to_have_text("1")
    expect(card.locator(".inbox-item")).not_to_have_class("inbox-item is-read")
    expect(card.get_by_role("button", name="Claim", exact=True)).to_have_count(0)
    expect(card.get_by_role("button", name="Resolve", exact=True)).to_have_count(0)

    pinned = page.locator("#notice-list .notice-card")
    pinned.get_by_role("button", name="I have read this", exact=True).click()

    expect(pinned).to_have_count(0)
    expect(page.locator("#unread-count")).to_be_hidden()
    expect(card.locator(".inbox-item")).to_have_class("inbox-item is-read")
    # Its dialog offers no Claim or Resolve either, and shows no raw data.
    card.locator(".inbox-item").click()
    dialog = page.locator("#notification-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Claim", exact=True)).to_have_count(0)
    expect(dialog.get_by_role("button", name="Resolve", exact=True)).to_have_count(0)
    expect(dialog.locator("#dialog-data")).to_be_hidden()
    screen.shot(f"72-notice-read-{'handheld' if size.get('mobile') else 'desktop'}")


ESCALATION = {
    "en-US": {
        "title": "Not read in time: Forklift lane B closed",
        "body": "2 people have not read version 1 by its due time: alice and bob.",
        "roster": "Who has read it",
    },
    "zh-CN": {
        "title": "未按时阅读：Forklift lane B closed",  # noqa: RUF001 (Chinese punctuation)
        "body": "2 人未在截止时间前阅读第 1 版：alice和bob。",  # noqa: RUF001
        "roster": "阅读名单",
    },
}


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_missed_notice_escalates_in_sentences_with_a_link_to_the_roster(
    open_screen, make_user, role, warehouse, locale
):
    from notices import followups

    leads = Group.objects.create(name="Leads")
    lena = make_user("lena", leads)
    make_user("alice", role)
    make_user("bob", role)
    notice = publish_notice(warehouse, role, make_user("otto"), escalation_role=leads)
    Notice.objects.filter(pk=notice.pk).update(due_at=notice.created_at)
    assert followups.escalate_due(now=notice.created_at) == 1
    words = ESCALATION[locale]
    screen = open_screen(lena, locale=locale, **HANDHELD)
    page = screen.page

    card = inbox_entry(page, words["title"])
    expect(card).to_have_count(1)
    expect(card.locator(".inbox-item-title")).to_have_text(words["title"])
    expect(card.locator(".inbox-item-body")).to_have_text(words["body"])
    expect(card).not_to_contain_text("missing")
    expect(card.get_by_role("button", name="Claim", exact=True)).to_have_count(0)
    link = card.get_by_role("button", name=words["roster"], exact=True)
    assert_tappable(link.bounding_box(), "the roster link", screen=WIDTH, narrowest=44)

    link.tap()

    roster = page.locator("#roster-dialog")
    expect(roster).to_be_visible()
    expect(roster.locator("#roster-title")).to_have_text("Forklift lane B closed")
    expect(roster.locator(".roster-row")).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    screen.shot(f"73-notice-escalation-{locale}")
