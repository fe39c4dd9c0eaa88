"""The installable, offline-tolerant page (SPEC 12) in Chromium with mobile emulation: the
service worker keeps the shell, and claims, releases and resolves made offline are sent once,
with their Idempotency-Key, when the network is back."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Page, Request, Route, expect

from messaging import services as chat_services
from notifications import lifecycle, selectors
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.web.conftest import wait_until

pytestmark = pytest.mark.browser

HANDHELD: dict[str, Any] = {"size": (360, 640), "mobile": True}
KEY = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture
def crew(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> list[User]:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return [make_user("alice", role), make_user("bob", role)]


def notify(warehouse: Warehouse, title: str) -> str:
    result = publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, body="Stock -4")
    assert result.recipients >= 1
    return result.id


def events(user: User, warehouse: Warehouse, note_id: str) -> list[tuple[str, str | None]]:
    found = selectors.history(user=user, warehouse_id=warehouse.pk, notification_id=note_id)
    assert found is not None
    return [(e.event, e.by.username if e.by else None) for e in found]


LIFECYCLE_URL = re.compile(r"/api/v1/notifications/[^/]+/(claim|release|resolve)/$")


def lifecycle_posts(page: Page, *, answered: bool = False) -> list[Request]:
    """Every claim/release/resolve request the page sends, or (answered) of those every one
    that got an answer."""
    sent: list[Request] = []

    def note(request: Request) -> None:
        if LIFECYCLE_URL.search(request.url):
            sent.append(request)

    if answered:
        page.on("requestfinished", note)
    else:
        page.on("request", note)
    return sent


def card(page: Page, title: str):
    return page.locator("#inbox-list .inbox-entry", has_text=title)


def test_a_claim_made_offline_is_sent_once_when_back_online(open_screen, crew, warehouse):
    alice, _ = crew
    note_id = notify(warehouse, "Replenish A-01-03")
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    sent = lifecycle_posts(page)
    answered = lifecycle_posts(page, answered=True)
    item = card(page, "Replenish A-01-03")
    expect(item.get_by_role("button", name="Claim", exact=True)).to_be_visible()

    page.context.set_offline(True)
    item.get_by_role("button", name="Claim", exact=True).tap()

    expect(item).to_contain_text("Waiting for the network")
    expect(item).to_contain_text("Claimed by alice")  # as it will be
    expect(page.locator("#queued-actions")).to_have_text("1 action waits for the network")
    # The pill says Offline; "Reconnecting…" beside it would only say it again.
    expect(page.locator("#delivery-mode")).to_have_text("Offline")
    expect(page.locator("#connection-status")).to_be_hidden()
    screen.shot("50-offline-claim-queued")
    assert events(alice, warehouse, note_id) == [("published", None)]
    assert answered == []

    page.context.set_offline(False)

    expect(page.locator("#queued-actions")).to_be_hidden()
    expect(item).not_to_contain_text("Waiting for the network")
    expect(item).to_contain_text("Claimed by alice")
    expect(page.locator("#connection-status")).to_be_hidden()
    assert events(alice, warehouse, note_id) == [("published", None), ("claimed", "alice")]
    assert len(answered) == 1
    # Every try (one may have failed on the dead network) carried the action's one key.
    assert {r.headers["idempotency-key"] for r in sent} == {answered[0].headers["idempotency-key"]}
    assert KEY.match(answered[0].headers["idempotency-key"])


def test_queued_actions_survive_a_reload_and_go_in_order(open_screen, crew, warehouse):
    alice, _ = crew
    note_id = notify(warehouse, "Replenish B-02-01")
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    item = card(page, "Replenish B-02-01")
    expect(item.get_by_role("button", name="Claim", exact=True)).to_be_visible()
    page.context.set_offline(True)
    item.get_by_role("button", name="Claim", exact=True).tap()
    item.get_by_role("button", name="Release", exact=True).tap()
    item.get_by_role("button", name="Claim", exact=True).tap()
    page.locator(".filters [data-filter=all]").tap()
    item.get_by_role("button", name="Resolve", exact=True).tap()
    expect(page.locator("#queued-actions")).to_have_text("4 actions wait for the network")
    keys = page.evaluate(
        f"JSON.parse(localStorage.getItem('wms-notify:{alice.pk}:queue')).map((i) => i.key)"
    )
    assert len(set(keys)) == 4

    sent = lifecycle_posts(page)
    page.context.set_offline(False)  # the page starts sending at once ...
    page.reload()  # ... and the reload cuts it short: the rest is kept in the browser

    wait_until(page, lambda: len(events(alice, warehouse, note_id)) >= 5)
    expect(page.locator("#queued-actions")).to_be_hidden()
    assert [e for e, _ in events(alice, warehouse, note_id)] == [
        "published", "claimed", "released", "claimed", "resolved",
    ]  # fmt: skip
    # Sent in order, each with its key (one whose answer the reload cut off is sent again with
    # the same key, and the server answers it without doing it twice: see the events above).
    assert list(dict.fromkeys(r.headers["idempotency-key"] for r in sent)) == keys


def test_a_send_whose_answer_was_lost_is_replayed_harmlessly(open_screen, crew, warehouse):
    """The claim reaches the server, the answer does not reach the handheld: the page queues it
    and sends it again with the same key; it is claimed once."""
    alice, _ = crew
    note_id = notify(warehouse, "Replenish C-03-02")
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    sent = lifecycle_posts(page)
    lost: list[str] = []

    def lose_the_answer(route: Route) -> None:
        if lost:
            route.continue_()
            return
        route.fetch()  # the server does it ...
        lost.append(route.request.url)
        route.abort("internetdisconnected")  # ... and the answer is lost on the way back

    page.route(re.compile(r"/claim/$"), lose_the_answer)
    card(page, "Replenish C-03-02").get_by_role("button", name="Claim", exact=True).tap()

    wait_until(page, lambda: len(sent) == 2)
    expect(card(page, "Replenish C-03-02")).to_contain_text("Claimed by alice")
    expect(page.locator("#queued-actions")).to_be_hidden()
    expect(card(page, "Replenish C-03-02")).not_to_contain_text("Waiting for the network")
    assert len(sent) == 2
    assert sent[0].headers["idempotency-key"] == sent[1].headers["idempotency-key"]
    assert events(alice, warehouse, note_id) == [("published", None), ("claimed", "alice")]
    expect(page.locator(".toast")).to_have_count(0)  # nothing went wrong, nothing to say


def test_a_release_replayed_after_a_colleague_claimed_shows_the_colleagues_claim(
    open_screen, crew, warehouse
):
    """The release arrives, its answer is lost, bob claims it, the replay is answered with the
    release's own answer (SPEC 11): nothing went wrong, and the page shows bob has it now."""
    alice, bob = crew
    note_id = notify(warehouse, "Replenish D-04-01")
    lifecycle.claim(user=alice, warehouse_id=warehouse.pk, notification_id=note_id)
    screen = open_screen(alice, **HANDHELD)
    page = screen.page

    handled: list[str] = []

    def release_then_bob_claims(route: Route) -> None:
        if handled:
            route.continue_()
            return
        handled.append(route.request.url)
        route.fetch()
        lifecycle.claim(user=bob, warehouse_id=warehouse.pk, notification_id=note_id)
        route.abort("internetdisconnected")

    page.route(re.compile(r"/release/$"), release_then_bob_claims)
    card(page, "Replenish D-04-01").get_by_role("button", name="Release", exact=True).tap()

    expect(card(page, "Replenish D-04-01")).to_contain_text("Claimed by bob")
    expect(page.locator("#queued-actions")).to_be_hidden()
    expect(page.locator(".toast")).to_have_count(0)
    assert [e for e, _ in events(bob, warehouse, note_id)] == [
        "published", "claimed", "released", "claimed",
    ]  # fmt: skip


def test_the_shell_opens_without_a_network(open_screen, crew, live_server):
    alice, _ = crew
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == live_server.url + "/"
    # The worker installed: the page itself is in its cache. (Evaluated in a loop:
    # page.wait_for_function takes a promise for true at once.)
    wait_until(
        page,
        lambda: page.evaluate(
            "caches.keys().then((names) => Promise.all(names.map((n) => caches.open(n)"
            ".then((c) => c.match('/'))))).then((found) => found.some(Boolean))"
        ),
    )

    page.context.set_offline(True)
    page.reload()

    expect(page.locator("#bell-button")).to_be_visible()
    expect(page.locator(".filters [data-filter=all]")).to_be_visible()
    expect(page.locator("#delivery-mode")).to_have_text("Offline")  # it says it is offline
    screen.shot("51-offline-shell")
    page.context.set_offline(False)
    expect(page.locator("#connection-status")).to_be_hidden()


def test_the_page_links_its_manifest(open_screen, crew):
    screen = open_screen(crew[0], **HANDHELD)
    manifest = screen.page.evaluate(
        "fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json())"
    )
    assert manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"


MINUTES = """
(times) => times.map((ms) => new Intl.DateTimeFormat(document.documentElement.lang,
  { timeStyle: "short" }).format(new Date(ms)))
"""


def test_an_offline_reload_shows_the_last_known_alerts_and_chats(open_live_screen, crew, warehouse):
    """With 7 open alerts a reload without a network shows them (and the unread summary and the
    chats), marked with the time they are from; the pill says Offline as soon as the browser
    does; a claim waits for the network as before."""
    alice, bob = crew
    ids = [notify(warehouse, f"Replenish A-0{n + 1}-03") for n in range(7)]
    chat = chat_services.chat_open_direct(user=bob, other_id=alice.pk)
    chat_services.message_send(user=bob, chat_id=chat.id, body="Bin A-01-03 is empty")
    # The last answer the page kept may be any from here on (the first visit's, the reload's
    # or a poll's; the browser runs on this machine's clock).
    answered_from = int(time.time() * 1000)
    screen = open_live_screen(alice, **HANDHELD)
    page = screen.page
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()  # a later visit: the page runs under the service worker from the start
    entries = page.locator("#inbox-list .inbox-entry")
    expect(entries).to_have_count(7)
    expect(page.locator("#chat-unread")).to_have_text("1")
    pill = page.locator("#delivery-mode")
    expect(pill).to_have_text("Live")

    page.context.set_offline(True)

    expect(pill).to_have_text("Offline")  # the stream has not noticed yet; the browser has
    answered_until = int(page.evaluate("Date.now()"))
    page.reload()

    expect(entries).to_have_count(7)
    expect(page.locator("#inbox-empty")).to_be_hidden()
    expect(pill).to_have_text("Offline")
    marker = page.locator("#inbox-offline")
    expect(marker).to_be_visible()
    times = page.evaluate(MINUTES, [answered_from, answered_until])
    assert marker.inner_text() in {f"Offline \u2013 as of {t}" for t in times}
    expect(page.locator("#unread-count")).to_have_text("7")
    expect(page.locator("#chat-unread")).to_have_text("1")
    screen.shot("52-offline-reload")
    page.locator("#bell-button").tap()
    expect(page.locator("#unread-list .summary")).to_have_count(5)
    expect(page.locator("#notification-panel .offline-copy")).to_have_text(marker.inner_text())
    page.locator("#bell-button").tap()
    page.locator("#chat-button").tap()
    expect(page.locator("#chat-list")).to_contain_text("Bin A-01-03 is empty")
    expect(page.locator("#chat-panel .offline-copy").first).to_have_text(marker.inner_text())
    page.locator("#chat-panel .chat-view:not([hidden]) .chat-close").tap()

    # Actions queue as before, and go when the network is back.
    item = card(page, "Replenish A-01-03")
    item.get_by_role("button", name="Claim", exact=True).tap()
    expect(item).to_contain_text("Waiting for the network")
    page.context.set_offline(False)
    expect(item).not_to_contain_text("Waiting for the network")
    expect(item).to_contain_text("Claimed by alice")
    expect(marker).to_be_hidden()
    expect(pill).not_to_have_text("Offline")
    assert events(alice, warehouse, ids[0]) == [("published", None), ("claimed", "alice")]


KEPT_ANSWERS = "caches.keys().then((names) => names.filter((n) => n.startsWith('wms-answers-')))"


def test_signing_out_drops_the_kept_answers(open_screen, crew, warehouse):
    """The kept list names the user's alerts: a shared handheld must not show them to the next
    one offline."""
    alice, _ = crew
    notify(warehouse, "Replenish A-01-03")
    screen = open_screen(alice, **HANDHELD)
    page = screen.page
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()
    expect(page.locator("#inbox-list .inbox-entry")).to_have_count(1)
    wait_until(page, lambda: len(page.evaluate(KEPT_ANSWERS)) == 1)

    page.locator("#account-button").tap()
    page.locator(".sign-out").tap()

    page.wait_for_url("**/login/**")
    wait_until(page, lambda: page.evaluate(KEPT_ANSWERS) == [])
