"""The handover card on a handheld (SPEC 13): the outgoing shift's counts and Accept."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from config import timestamps
from notifications.services import publish
from shifts import cache, handovers
from shifts.models import Handover, Shift
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.browser

HANDHELD = {"size": (360, 640), "mobile": True}


@pytest.fixture(autouse=True)
def _opens_on_sh01(settings) -> None:
    settings.UI_DEFAULT_WAREHOUSE = "SH01"


@pytest.fixture
def handed_over(
    make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType
) -> tuple[User, Handover]:
    """alice's role had a shift that ended a minute ago, leaving one open alert: handed over."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    alice = make_user("alice", role)
    publish(message_type=rep_notice, warehouse=warehouse, title="Replenish A-01-03")
    now = timestamps.now().replace(second=0, microsecond=0)
    Shift.objects.create(
        warehouse=warehouse,
        role=role,
        name="Early",
        starts=(now - dt.timedelta(hours=2)).time(),
        ends=(now - dt.timedelta(minutes=1)).time(),
    )
    cache.forget()
    assert handovers.hand_over_due() == 1
    return alice, Handover.objects.get()


def test_the_handover_card_shows_the_counts_and_is_accepted_once(open_screen, handed_over):
    alice, handover = handed_over
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    card = page.locator("#inbox-list .handover-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("Shift handover: Early (Replenishment)")
    expect(card).to_contain_text("1 open")
    expect(card).to_contain_text("0 claimed by the outgoing shift")
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
