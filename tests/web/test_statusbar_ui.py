"""The handheld's status line and filters at 360x640 with touch, in English and Chinese
(SPEC 12): every state the status line can show (how updates arrive, when they last came, the
unread count, news, reconnecting, updates failing, offline, actions waiting for the network,
signed out) is read in full, never shortened with an ellipsis or cut by the line's edge; and
the filters sit on one row, each label whole."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Page, Route, expect

from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD: dict[str, Any] = {"size": (360, 640), "mobile": True}
NOTIFICATIONS_API = re.compile(r"/api/v1/notifications/(\?.*)?$")

WORDS = {
    "en-US": {
        "updated": "Updated",
        "unread": "12 unread notifications",
        "new": "New: Replenish F-06-01",
        "polling": "Polling",
        "offline": "Offline",
        "reconnecting": "Reconnecting…",
        "failing": "Updates failed. Retrying…",
        "one_waits": "1 action waits for the network",
        "three_wait": "3 actions wait for the network",
        "signed_out": "Signed out. Reload the page to sign in again.",
        "claim": "Claim",
    },
    "zh-CN": {
        "updated": "更新于",
        "unread": "12 条未读通知",
        "new": "新通知：Replenish F-06-01",  # noqa: RUF001 (Chinese punctuation)
        "polling": "轮询",
        "offline": "离线",
        "reconnecting": "正在重新连接…",
        "failing": "更新失败，正在重试…",  # noqa: RUF001 (Chinese punctuation)
        "one_waits": "1 个操作等待网络",
        "three_wait": "3 个操作等待网络",
        "signed_out": "已退出登录。请刷新页面重新登录。",
        "claim": "认领",
    },
}

# Every piece of the status line that is shown: what keeps it from being read in full.
STATUSBAR_PROBLEMS = """
() => {
  const bar = document.querySelector(".statusbar");
  const edge = bar.getBoundingClientRect();
  const problems = [];
  const name = (e) => e.id ? `#${e.id}` : `.${[...e.classList].join(".") || e.tagName}`;
  for (const element of [bar, ...bar.querySelectorAll("*")]) {
    if (element.getClientRects().length === 0) continue;  // not shown
    const r = element.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const style = getComputedStyle(element);
    const what = `${name(element)} (${JSON.stringify(element.textContent.trim())})`;
    const [sw, cw, sh, ch] = [element.scrollWidth, element.clientWidth,
                              element.scrollHeight, element.clientHeight];
    if (sw > cw + 1) {
      problems.push(`${what} is wider than its box (${sw} > ${cw})`
        + (style.textOverflow === "ellipsis" ? ", shortened with an ellipsis" : ""));
    }
    if (sh > ch + 1) problems.push(`${what} is taller than its box (${sh} > ${ch})`);
    if (element !== bar && (r.left < edge.left - 0.5 || r.right > edge.right + 0.5
        || r.top < edge.top - 0.5 || r.bottom > edge.bottom + 0.5)) {
      problems.push(`${what} reaches past the status line`);
    }
    if (r.left < 0 || r.right > window.innerWidth + 0.5) problems.push(`${what} is off the screen`);
  }
  // Each word on one line, inside the line's box.
  const walker = document.createTreeWalker(bar, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.getClientRects().length) continue;
    for (const word of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const rects = [...range.getClientRects()].filter((x) => x.width > 0);
      if (rects.length > 1) problems.push(`"${word[0]}" broken over two lines`);
      for (const x of rects) {
        if (x.left < edge.left - 0.5 || x.right > edge.right + 0.5 || x.top < edge.top - 0.5
            || x.bottom > edge.bottom + 0.5) {
          problems.push(`"${word[0]}" is cut by the status line's edge`);
        }
      }
    }
  }
  return problems;
}
"""


def check(page: Page, state: str, found: dict[str, list[str]], shot: str) -> None:
    """Note what keeps the status line's text in `state` from being read in full (and keep a
    screenshot of it): the test goes through every state, then tells all that were cut."""
    problems = page.evaluate(STATUSBAR_PROBLEMS)
    if problems:
        found[state] = problems
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{shot}.png"))


@pytest.fixture
def alice(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> User:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


def notify(warehouse: Warehouse, title: str) -> None:
    assert publish(message_type="REP_NOTICE", warehouse=warehouse, title=title).recipients == 1


def at_noon(page: Page) -> None:
    """The page's clock shows 12:48:58, the widest time of day (two-digit hour, "PM")."""
    today = dt.datetime.now().astimezone()
    page.clock.set_fixed_time(today.replace(hour=12, minute=48, second=58))


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_every_state_of_the_status_line_is_read_in_full(open_screen, alice, warehouse, locale):
    words = WORDS[locale]
    for n in range(12):
        notify(warehouse, f"Replenish A-01-{n:02d}")
    screen = open_screen(alice, locale=locale, **HANDHELD)
    page = screen.page
    at_noon(page)
    page.reload()
    tag = f"statusbar-{locale}"
    cut: dict[str, list[str]] = {}

    # Online: how updates arrive, the unread count and when the last update came.
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(12)
    expect(page.locator("#delivery-mode")).to_have_text(words["polling"])
    expect(page.locator("#inbox-summary")).to_have_text(words["unread"])
    expect(page.locator("#last-updated")).to_contain_text(words["updated"])
    expect(page.locator("#last-updated")).to_contain_text("12:48")
    check(page, "online", cut, f"{tag}-online")

    # News: a toast takes the summary's place.
    notify(warehouse, "Replenish F-06-01")
    expect(page.locator(".toast")).to_have_text(words["new"])
    check(page, "a toast", cut, f"{tag}-toast")
    expect(page.locator(".toast")).to_have_count(0, timeout=15_000)

    # The server in trouble: reconnecting (a 503), then updates failing (an answer that retrying
    # will not change, a 404).
    def answer(status: int):
        def handler(route: Route) -> None:
            route.fulfill(status=status, json={"detail": "trouble"}, headers={"Retry-After": "1"})

        return handler

    page.route(NOTIFICATIONS_API, answer(503))
    expect(page.locator("#connection-status")).to_be_visible()
    expect(page.locator("#connection-text")).to_have_text(words["reconnecting"])
    check(page, "reconnecting", cut, f"{tag}-reconnecting")
    page.unroute(NOTIFICATIONS_API)
    page.route(NOTIFICATIONS_API, answer(404))
    expect(page.locator("#connection-text")).to_have_text(words["failing"])
    check(page, "updates failing", cut, f"{tag}-failing")
    page.unroute(NOTIFICATIONS_API)
    expect(page.locator("#connection-status")).to_be_hidden()

    # Offline, then actions made offline waiting for the network.
    page.context.set_offline(True)
    expect(page.locator("#delivery-mode")).to_have_text(words["offline"])
    expect(page.locator("#connection-status")).to_have_attribute("title", words["reconnecting"])
    # The pill says Offline: "Reconnecting…" beside it would say the same again.
    expect(page.locator("#connection-status")).to_be_hidden()
    check(page, "offline", cut, f"{tag}-offline")
    claims = page.locator("#inbox-list .item-actions").get_by_role(
        "button", name=words["claim"], exact=True
    )
    claims.first.tap()
    expect(page.locator("#queued-actions")).to_have_text(words["one_waits"])
    check(page, "one action waiting", cut, f"{tag}-one-waits")
    claims.first.tap()
    claims.first.tap()
    expect(page.locator("#queued-actions")).to_have_text(words["three_wait"])
    check(page, "three actions waiting", cut, f"{tag}-three-wait")
    screen.shot(f"90-statusbar-offline-{locale}")
    page.context.set_offline(False)
    expect(page.locator("#queued-actions")).to_be_hidden()
    expect(page.locator("#connection-status")).to_be_hidden()
    expect(page.locator("#delivery-mode")).to_have_text(words["polling"])
    check(page, "back online", cut, f"{tag}-back")

    # Signed out (the session ended): the last state, polling stops.
    page.route(NOTIFICATIONS_API, lambda route: route.fulfill(status=403, json={"detail": "no"}))
    expect(page.locator("#connection-text")).to_have_text(words["signed_out"])
    check(page, "signed out", cut, f"{tag}-signed-out")
    screen.shot(f"91-statusbar-signed-out-{locale}")
    assert cut == {}, f"the status line cuts its text: {cut}"


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_filters_sit_on_one_row_whole(open_screen, alice, warehouse, locale):
    notify(warehouse, "Replenish A-01-03")
    screen = open_screen(alice, locale=locale, **HANDHELD)
    page = screen.page
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(1)
    filters = page.locator(".filters .filter")
    expect(filters).to_have_count(6)
    boxes = page.evaluate(
        """[...document.querySelectorAll(".filters .filter")].map((b) => {
             const r = b.getBoundingClientRect();
             return {text: b.textContent, top: r.top, left: r.left, right: r.right,
                     width: r.width, height: r.height,
                     whole: b.scrollWidth <= b.clientWidth};
           })"""
    )
    assert len({round(b["top"]) for b in boxes}) == 1, f"the filters wrap: {boxes}"
    for b in boxes:
        assert b["whole"], f"{b['text']!r} is shortened: {b}"
        assert b["left"] >= 0
        assert b["right"] <= 360 + 0.5, f"{b['text']!r} ends right of the screen: {b}"
        assert b["width"] >= 44
        assert b["height"] >= 44
    row = page.locator(".filters").bounding_box()
    assert row is not None
    assert row["height"] < 60, f"the filters take {row['height']} px"
    screen.shot(f"92-filters-{locale}")
