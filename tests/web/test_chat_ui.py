"""Chat in a real browser: two people in two browser contexts, and starting a group chat."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def start_chat(page: Page, names: list[str], message: str) -> None:
    page.locator("#chat-button").click()
    page.get_by_role("button", name="New chat").click()
    contact = page.locator("#contact-input")
    for name in names:
        contact.fill(name[:2])
        page.get_by_role("option", name=name).click()
        expect(page.locator("#recipient-chips .chip", has_text=name)).to_be_visible()
    page.locator("#new-chat-message").fill(message)
    page.locator("#new-chat-submit").click()


def test_two_people_chat(open_screen, make_user, warehouse):
    alice, bob = make_user("alice"), make_user("bob")
    make_user("bonnie")  # a second match for "bo", so the autocomplete has to choose
    a = open_screen(alice)
    b = open_screen(bob)

    start_chat(a.page, ["bob"], "Can you check bin A-01-03?")
    expect(a.page.locator("#conversation-title")).to_have_text("bob")
    expect(a.page.locator("#message-list .message.mine .message-body")).to_have_text(
        ["Can you check bin A-01-03?"]
    )

    # bob sees the chat arrive, with its unread badge, without reloading.
    expect(b.page.locator("#chat-unread")).to_have_text("1")
    b.page.locator("#chat-button").click()
    item = b.page.locator("#chat-list .chat-item", has_text="alice")
    expect(item.locator(".badge")).to_contain_text("1")
    expect(item.locator(".chat-item-preview")).to_have_text("Can you check bin A-01-03?")
    b.shot("11-chat-list-unread")
    item.click()
    expect(b.page.locator("#message-list .message.theirs .message-body")).to_have_text(
        ["Can you check bin A-01-03?"]
    )
    expect(b.page.locator("#chat-unread")).to_have_text("0")  # read by opening it
    b.page.locator("#message-input").fill("On my way, 5 minutes.")
    b.page.locator("#message-input").press("Enter")
    expect(b.page.locator("#message-list .message.mine .message-body")).to_have_text(
        ["On my way, 5 minutes."]
    )
    expect(b.page.locator("#message-input")).to_have_value("")

    # alice has the conversation open: the reply appears and counts as read at once.
    expect(a.page.locator("#message-list .message-body")).to_have_text(
        ["Can you check bin A-01-03?", "On my way, 5 minutes."]
    )
    expect(a.page.locator("#chat-unread")).to_have_text("0")
    a.shot("12-chat-conversation")


def test_start_a_group_chat_with_the_keyboard(open_screen, make_user, warehouse):
    alice = make_user("alice")
    make_user("bob")
    make_user("carol")
    screen = open_screen(alice)
    page = screen.page
    page.locator("#chat-button").click()
    page.get_by_role("button", name="New chat").click()
    contact = page.locator("#contact-input")
    for prefix in ("b", "ca"):
        contact.fill(prefix)
        expect(page.locator("#contact-options [role=option]").first).to_be_visible()
        contact.press("Enter")  # the first match is active
    expect(page.locator("#recipient-chips .chip")).to_have_count(2)
    expect(page.locator("#new-chat-submit")).to_have_text("Start group chat")
    page.locator("#new-chat-submit").click()
    expect(page.locator("#new-chat-error")).to_contain_text("starts with a message")
    page.locator("#new-chat-message").fill("Stand-up at the dock in 10 <b>minutes</b>")
    screen.shot("13-new-group-chat")
    page.locator("#new-chat-submit").click()
    expect(page.locator("#conversation-members")).to_have_text("alice, bob, carol")
    expect(page.locator("#message-list .message-body")).to_have_text(
        ["Stand-up at the dock in 10 <b>minutes</b>"]
    )
    page.locator(".chat-back").first.click()
    expect(page.locator("#chat-list .chat-item-name")).to_have_text(["bob, carol"])
