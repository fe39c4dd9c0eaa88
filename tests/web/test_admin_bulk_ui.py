"""The admin's bulk-subscribe page in Chromium: styled like the rest of the admin (the four
pickers side by side with their Choose/Remove arrows, labels before the widgets), and short."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from subscriptions.models import MessageType, Warehouse

pytestmark = pytest.mark.browser


@pytest.fixture
def staff(make_user, db):
    for n in range(3):
        Warehouse.objects.create(code=f"W{n}", name=f"Warehouse {n}")
        MessageType.objects.create(code=f"T{n}", name=f"类型 {n}", name_en=f"Type {n}")
        Group.objects.create(name=f"Role {n}")
    return make_user("admin", is_staff=True, is_superuser=True)


def test_the_bulk_page_looks_like_the_admin(open_screen, staff):
    screen = open_screen(staff, path="/admin/subscriptions/subscription/bulk/", size=(1366, 768))
    page = screen.page
    pickers = page.locator(".selector")
    expect(pickers).to_have_count(4)  # SelectFilter2.js built all four
    screen.shot("60-admin-bulk")

    for index in range(4):
        picker = pickers.nth(index)
        available = picker.locator(".selector-available").bounding_box()
        chosen = picker.locator(".selector-chosen").bounding_box()
        assert available
        assert chosen
        # Side by side, not stacked: the chosen list is to the right, level with the other.
        assert chosen["x"] > available["x"] + available["width"] - 1
        assert abs(chosen["y"] - available["y"]) < 5
        # The Choose/Remove arrows are the admin's icons, not a bulleted list of buttons.
        arrow = picker.locator(".selector-chooser li").first
        assert arrow.evaluate("e => getComputedStyle(e).listStyleType") == "none"
        row = picker.locator("xpath=ancestor::div[contains(@class, 'form-row')]")
        label = row.locator("label").first.bounding_box()
        assert label
        # The label comes first: to the left of the widget, or above it.
        assert label["x"] + label["width"] <= available["x"] + 1 or label["y"] < available["y"]

    # Four admin pickers, one under the other, as on the admin's own forms (broken, with the
    # pickers stacked inside themselves, it was about 2,570 px).
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 2100, f"the page is {height} px tall"
