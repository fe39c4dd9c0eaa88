"""The page over the event stream (under the ASGI server), and its fall-back to polling."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import APIResponse, Route, expect

from messaging import services as chat_services
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.conftest import Screen, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def operator(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> User:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


@pytest.fixture
def asgi_screen(browser, settings, asgi_server) -> Iterator:
    """asgi_screen(user) -> the warehouse page served by uvicorn, signed in as `user`."""
    # Polling alone could never be this quick: whatever arrives in time came by the stream.
    settings.UI_POLL_INTERVAL_SECONDS = 30
    contexts = []
    screens: list[Screen] = []
    url = asgi_server

    def open_(user: User, **options: object) -> Screen:
        """`options` go to the browser context (viewport, locale, is_mobile, has_touch)."""
        options.setdefault("viewport", {"width": 1280, "height": 800})
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        client = Client()
        client.force_login(user)
        cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
        context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": url}])
        page = context.new_page()
        screen = Screen(page)
        page.on("pageerror", lambda error: screen.errors.append(str(error)))
        screens.append(screen)
        page.goto(url + "/")
        return screen

    yield open_
    for context in contexts:
        context.close()
    assert [e for s in screens for e in s.errors] == []


def test_a_publish_appears_in_the_page_within_two_seconds(asgi_screen, operator, warehouse):
    screen = asgi_screen(operator)
    page = screen.page
    expect(page.locator("#delivery-mode")).to_have_text("Live")
    expect(page.locator("#inbox-summary")).to_have_text("No unread notifications")

    started = time.monotonic()
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    expect(page.locator("#unread-count")).to_have_text("1", timeout=2000)
    expect(page.locator("#inbox-list .inbox-item")).to_have_count(1, timeout=2000)
    expect(page.locator(".toast")).to_contain_text("New: Replenish A-01-03", timeout=2000)
    assert time.monotonic() - started < 2.0
    screen.shot("20-live-notification")


def test_live_on_a_handheld_in_chinese(asgi_screen, operator):
    """The "实时" (Live) pill stays on one line at 360 px, and nothing overflows sideways."""
    screen = asgi_screen(
        operator,
        viewport={"width": 360, "height": 640},
        locale="zh-CN",
        is_mobile=True,
        has_touch=True,
    )
    page = screen.page
    mode = page.locator("#delivery-mode")
    expect(mode).to_have_text("实时")
    pill = mode.bounding_box()
    assert pill is not None
    assert pill["height"] < 30
    assert pill["x"] + pill["width"] <= 360
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screen.shot("47-live-handheld-zh")


def live_chat_with_bob(
    asgi_screen, operator: User, make_user, **options: object
) -> tuple[User, Any, Screen]:
    """bob's direct chat with the operator, and the operator's page, live, showing it."""
    bob = make_user("bob")
    chat = chat_services.chat_open_direct(user=bob, other_id=operator.pk)
    screen = asgi_screen(operator, **options)
    expect(screen.page.locator("#delivery-mode")).to_have_text("Live")
    screen.page.locator("#chat-button").click()
    expect(screen.page.locator("#chat-list .chat-item")).to_have_count(1)
    return bob, chat, screen


def test_a_chat_message_appears_within_two_seconds(asgi_screen, operator, make_user, warehouse):
    bob, chat, screen = live_chat_with_bob(asgi_screen, operator, make_user)
    page = screen.page

    started = time.monotonic()
    chat_services.message_send(user=bob, chat_id=chat.id, body="Bin A-01-03 is empty")
    expect(page.locator("#chat-unread")).to_have_text("1", timeout=2000)
    expect(page.locator("#chat-list .chat-item-preview")).to_have_text(
        "Bin A-01-03 is empty", timeout=2000
    )
    assert time.monotonic() - started < 2.0
    screen.shot("21-live-chat")


def test_a_chat_message_pushed_while_a_poll_is_on_its_way_stays(
    asgi_screen, operator, make_user, warehouse
):
    """The stream delivers a message while the chat list's poll is on its way, with an answer
    made before the message: the older answer must not take the message off the page."""
    # page.route never sees a request the service worker answers, and the worker answers the
    # chat list (it keeps it for a reload without a network): this page runs without it.
    bob, chat, screen = live_chat_with_bob(
        asgi_screen, operator, make_user, service_workers="block"
    )
    page = screen.page

    held: list[tuple[Route, APIResponse]] = []
    chat_list = re.compile(r"/api/v1/chats/$")

    def hold_the_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))

    page.route(chat_list, hold_the_first)
    page.evaluate("window.dispatchEvent(new Event('online'))")  # the page polls now
    wait_until(page, lambda: len(held) == 1)

    chat_services.message_send(user=bob, chat_id=chat.id, body="Bin A-01-03 is empty")
    preview = page.locator("#chat-list .chat-item-preview")
    expect(preview).to_have_text("Bin A-01-03 is empty")  # pushed
    shown = page.locator("#chat-list .chat-item").element_handle()
    route, before_the_message = held[0]
    route.fulfill(response=before_the_message)
    shown.wait_for_element_state("hidden")  # the poll's answer re-drew the list

    expect(preview).to_have_text("Bin A-01-03 is empty")
    expect(page.locator("#chat-unread")).to_have_text("1")


def test_without_the_stream_the_page_polls_and_says_so(open_screen, operator, warehouse):
    """Django's live_server is WSGI: no stream there (404), so the page falls back to polling."""
    screen = open_screen(operator)
    page = screen.page
    expect(page.locator("#delivery-mode")).to_have_text("Polling")
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish A-01-03")
    expect(page.locator("#unread-count")).to_have_text("1")


def test_a_colleagues_claim_lowers_my_badge_at_once(
    asgi_screen, operator, make_user, role, warehouse
):
    """Issue 19 UI: two pages of one role; one claims; the other's badge, "N unread" line and
    bell panel drop at once over the stream (the API's count already did)."""
    from notifications import lifecycle

    bob = make_user("bob", role)
    sent = [
        publish(message_type="REP_NOTICE", warehouse=warehouse, title=f"Bin {i}") for i in range(6)
    ]
    screen = asgi_screen(operator)
    page = screen.page
    expect(page.locator("#delivery-mode")).to_have_text("Live")
    expect(page.locator("#unread-count")).to_have_text("6")
    expect(page.locator("#unread-list")).to_contain_text("Bin 5")
    # From here on only the stream can tell the page: polls fail.
    page.route("**/api/v1/notifications/**", lambda route: route.abort())

    lifecycle.claim(user=bob, warehouse_id=warehouse.pk, notification_id=sent[-1].id)

    expect(page.locator("#unread-count")).to_have_text("5", timeout=2000)
    expect(page.locator("#inbox-summary")).to_have_text("5 unread notifications", timeout=2000)
    expect(page.locator("#unread-list")).not_to_contain_text("Bin 5", timeout=2000)
    expect(page.locator("#unread-list")).to_contain_text("Bin 4")
