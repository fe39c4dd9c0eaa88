"""Web Push in Chromium (SPEC 12): the service worker's push and notification-click handlers,
and the page's "Push alerts" toggle.

A push goes the whole way: published, encrypted by the server's Celery task for a browser whose
push service is an HTTPS stand-in, decrypted there with the browser's key, and delivered to the
page's service worker through the DevTools protocol (`ServiceWorker.deliverPushMessage`), as
Chromium's push service would. Chromium lets no script make a trusted notification click, so
the click is a `NotificationEvent` dispatched in the worker: the same listener runs, and the
test awaits the work it hands to `waitUntil` (which the browser refuses for an event a script
made).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, Page, Worker, expect

from notifications import selectors
from notifications.services import publish
from push.keys import b64url_decode
from push.models import PushSubscription
from push.services import subscription_save
from subscriptions.models import Subscription, Warehouse
from tests.push.conftest import Browser, PushServiceStandIn

pytestmark = pytest.mark.browser


def until(page: Page, condition: Callable[[], Any], timeout_ms: int = 30_000) -> Any:
    """Wait for `condition()` while Playwright keeps receiving events (a plain sleep would
    stall it)."""
    waited = 0
    while not (value := condition()):
        assert waited < timeout_ms, "condition not met in time"
        page.wait_for_timeout(50)
        waited += 50
    return value


@pytest.fixture
def crew(make_user, role, warehouse, other_warehouse, rep_notice) -> User:
    """alice, whose Replenishment role receives REP_NOTICE in SH01 and BJ02."""
    for place in (warehouse, other_warehouse):
        Subscription.objects.create(message_type=rep_notice, warehouse=place, role=role)
    return make_user("alice", role)


class Handheld:
    """alice's browser: the warehouse page (which registers /sw.js), a subscription whose
    endpoint is on the stand-in, and a DevTools session that delivers pushes to the worker
    (on the page itself, then, once the page is closed, on a blank tab)."""

    def __init__(self, page: Page, origin: str, push_service: PushServiceStandIn) -> None:
        self.page = page
        self.context: BrowserContext = page.context
        self.origin = origin
        self.push_service = push_service
        self.browser = Browser(push_service.endpoint("alice-phone"))
        self.context.grant_permissions(["notifications"], origin=origin)
        page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        self.port = page
        self.registration_id = self._attach()

    def _attach(self) -> str:
        self.cdp = self.context.new_cdp_session(self.port)
        registrations: list[dict] = []
        self.cdp.on(
            "ServiceWorker.workerRegistrationUpdated",
            lambda event: registrations.extend(
                r for r in event["registrations"] if r["scopeURL"] == self.origin + "/"
            ),
        )
        self.cdp.send("ServiceWorker.enable")
        return until(self.port, lambda: registrations)[0]["registrationId"]

    def close_page(self) -> None:
        """The tab is closed, as it often is on a handheld; a blank tab (not a page of the
        app) keeps the DevTools session."""
        self.port = self.context.new_page()
        self.port.goto("about:blank")
        self._attach()
        self.page.close()

    @property
    def worker(self) -> Worker:
        return next(w for w in self.context.service_workers if w.url == self.origin + "/sw.js")

    def subscribe(self, user: User, *warehouses: Warehouse) -> None:
        subscription_save(
            user=user,
            endpoint=self.browser.endpoint,
            warehouses=list(warehouses),
            **self.browser.keys,
        )

    def push_what_arrived(self, *, expect_shown: bool = True) -> dict:
        """Decrypt the newest push the stand-in received and deliver it to the worker.

        When the worker has no page left, Chromium now and then stops it as the message comes
        and drops the message (seen about once in ten runs on a loaded machine); a push
        service redelivers what was not acknowledged, and so does this: the same push again
        (same tag, so it replaces rather than adds) until it is shown.
        """
        received = until(self.port, lambda: self.push_service.received)[-1]
        plain = self.browser.decrypt(received.body)
        for _ in range(4):
            self.cdp.send(
                "ServiceWorker.deliverPushMessage",
                {
                    "origin": self.origin,
                    "registrationId": self.registration_id,
                    "data": json.dumps(plain),
                },
            )
            if not expect_shown:
                break
            try:
                until(self.port, lambda: any(n["tag"] == plain["id"] for n in self.shown()), 5_000)
                break
            except AssertionError:
                continue
        return plain

    def deliver_again(self, plain: dict) -> None:
        """The push service delivers the same message once more (at least once, not exactly)."""
        self.cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": self.origin,
                "registrationId": self.registration_id,
                "data": json.dumps(plain),
            },
        )

    def shown(self) -> list[dict]:
        return self.worker.evaluate(
            """() => self.registration.getNotifications().then((shown) => shown.map((n) => ({
                 title: n.title, body: n.body, tag: n.tag, data: n.data,
                 actions: n.actions.map((a) => [a.action, a.title]),
                 requireInteraction: n.requireInteraction })))"""
        )

    def click(self, action: str) -> None:
        """The user taps `action` ("claim", "open", or "" for the notification itself)."""
        self.worker.evaluate(
            """async (action) => {
                 const [notification] = await self.registration.getNotifications();
                 const event = new NotificationEvent("notificationclick", { notification, action });
                 // The browser refuses waitUntil for an event a script made; this evaluation
                 // awaits the listener's work instead, so the worker is busy until it is done.
                 let work = Promise.resolve();
                 event.waitUntil = (promise) => { work = promise; };
                 self.dispatchEvent(event);
                 await work;
               }""",
            action,
        )

    def unfocus(self) -> None:
        """Playwright keeps every page focused; let the warehouse page lose focus as a
        background tab does, to another tab."""
        self.context.new_page().goto("about:blank")
        self.context.new_cdp_session(self.page).send(
            "Emulation.setFocusEmulationEnabled", {"enabled": False}
        )
        until(self.port, lambda: not self.page.evaluate("document.hasFocus()"))


@pytest.fixture
def handheld(open_screen, live_server, push_service, crew, celery_eager) -> Handheld:
    screen = open_screen(crew)
    return Handheld(screen.page, live_server.url, push_service)


def critical(warehouse: Warehouse, title: str = "Stock-out A-01-03") -> str:
    return publish(
        message_type="REP_NOTICE",
        warehouse=warehouse,
        title=title,
        body="Pick face empty after wave 8812",
        severity="critical",
    ).id


def status_for(user: User, warehouse: Warehouse, note_id: str) -> tuple[str, str | None]:
    page = selectors.inbox_page(user=user, warehouse_id=warehouse.pk, since=0, include_read=True)
    [item] = [i for i in page.items if i.notification.id == note_id]
    holder = item.lifecycle.claimed_by
    return item.lifecycle.status, holder.username if holder else None


def test_a_push_is_shown_with_claim_and_open_and_claim_works_without_the_page(
    handheld, crew, warehouse
):
    handheld.subscribe(crew, warehouse)
    handheld.close_page()

    note_id = critical(warehouse)
    sent = handheld.push_what_arrived()

    [shown] = until(handheld.port, handheld.shown)
    assert shown["title"] == "Stock-out A-01-03"
    assert shown["body"] == "Pick face empty after wave 8812"
    assert shown["tag"] == note_id
    assert shown["actions"] == [["claim", "Claim"], ["open", "Open"]]
    assert shown["requireInteraction"] is True  # critical: it stays until someone acts
    assert shown["data"] == sent

    handheld.click("claim")

    until(handheld.port, lambda: status_for(crew, warehouse, note_id) == ("claimed", "alice"))
    # The alert is replaced by how the claim went (its title says, whichever it was).
    [confirmation] = until(
        handheld.port,
        lambda: [n for n in handheld.shown() if n["title"].startswith(("Claimed", "Could not"))],
    )
    assert confirmation["title"] == "Claimed: Stock-out A-01-03"
    assert [p.url for p in handheld.context.pages] == ["about:blank"]  # no page was opened


def test_the_same_push_again_after_a_claim_leaves_the_claim_shown(handheld, crew, warehouse):
    """Push services deliver at least once: a copy of the alert's push that comes after it was
    claimed from the notification does not bring the unclaimed alert back."""
    handheld.subscribe(crew, warehouse)
    handheld.close_page()
    note_id = critical(warehouse)
    sent = handheld.push_what_arrived()
    handheld.click("claim")
    until(handheld.port, lambda: [n for n in handheld.shown() if n["title"].startswith("Claimed")])

    handheld.deliver_again(sent)
    critical(warehouse, "Another stock-out")  # pushes are handled in order: a marker after it
    handheld.push_what_arrived()

    titles = {n["tag"]: n["title"] for n in handheld.shown()}
    assert titles[note_id] == "Claimed: Stock-out A-01-03"


def test_claiming_what_a_colleague_took_says_who_has_it(handheld, crew, warehouse, make_user, role):
    from notifications import lifecycle

    handheld.subscribe(crew, warehouse)
    handheld.close_page()
    note_id = critical(warehouse)
    handheld.push_what_arrived()
    until(handheld.port, handheld.shown)
    bob = make_user("bob", role)
    lifecycle.claim(user=bob, warehouse_id=warehouse.pk, notification_id=note_id)

    handheld.click("claim")

    [answer] = until(
        handheld.port,
        lambda: [n for n in handheld.shown() if n["title"].startswith("Could not claim")],
    )
    assert answer["title"] == "Could not claim: Already claimed by bob."
    assert status_for(crew, warehouse, note_id) == ("claimed", "bob")


def test_nothing_is_shown_while_the_page_is_focused(handheld, crew, warehouse):
    handheld.subscribe(crew, warehouse)
    critical(warehouse, "Seen on the page")
    handheld.push_what_arrived(expect_shown=False)  # the focused page shows it itself

    handheld.close_page()
    critical(warehouse, "Page closed")
    handheld.push_what_arrived()

    # Pushes are handled in order: once the second is shown, the first was handled too.
    shown = until(handheld.port, handheld.shown)
    assert [n["title"] for n in shown] == ["Page closed"]


def test_open_brings_the_page_to_the_alerts_warehouse(handheld, crew, warehouse, other_warehouse):
    handheld.subscribe(crew, warehouse, other_warehouse)
    page = handheld.page
    select = page.locator("#warehouse-select")
    select.select_option(str(warehouse.pk))
    handheld.unfocus()  # a background tab: the push is shown

    critical(other_warehouse, "Dock door 4 blocked")
    handheld.push_what_arrived()
    until(handheld.port, handheld.shown)
    handheld.click("open")

    expect(select).to_have_value(str(other_warehouse.pk))
    expect(page.locator("#inbox-list")).to_contain_text("Dock door 4 blocked")


# The Push API needs a push service Chromium can reach, which this machine's closed network
# has not: the page's PushManager stands in (one subscription per browser, as the real one).
FAKE_PUSH_MANAGER = """
(() => {
  const made = %s;
  let current = null;
  window.__serverKeys = [];
  PushManager.prototype.getSubscription = async function () { return current; };
  PushManager.prototype.subscribe = async function (options) {
    window.__serverKeys.push(Array.from(new Uint8Array(options.applicationServerKey)));
    current = {
      endpoint: made.endpoint,
      options,
      toJSON: () => ({ endpoint: made.endpoint, expirationTime: null, keys: made.keys }),
      unsubscribe: async () => { current = null; window.__unsubscribed = true; return true; },
    };
    return current;
  };
})();
"""


def test_the_push_alerts_toggle_subscribes_this_browser_per_warehouse(
    open_screen, live_server, crew, warehouse, other_warehouse, client_for
):
    browser = Browser("https://fcm.googleapis.com/fcm/send/alice-phone")
    screen = open_screen(crew)
    page = screen.page
    page.context.grant_permissions(["notifications"], origin=live_server.url)
    page.add_init_script(
        FAKE_PUSH_MANAGER % json.dumps({"endpoint": browser.endpoint, "keys": browser.keys})
    )
    page.reload()
    page.locator("#warehouse-select").select_option(str(warehouse.pk))

    def warehouses() -> set[int]:
        row = PushSubscription.objects.filter(endpoint=browser.endpoint, user=crew).first()
        return set() if row is None else {w.pk for w in row.warehouses.all()}

    page.locator("#bell-button").click()
    toggle = page.get_by_role("button", name="Push alerts")
    expect(toggle).to_have_attribute("aria-pressed", "false")

    toggle.click()

    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert warehouses() == {warehouse.pk}
    server_key = client_for(crew).get("/api/v1/push/key/").json()["public_key"]
    assert page.evaluate("window.__serverKeys") == [list(b64url_decode(server_key))]

    page.locator("#warehouse-select").select_option(str(other_warehouse.pk))  # panel stays open
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert warehouses() == {warehouse.pk, other_warehouse.pk}

    toggle.click()  # off for BJ02 only
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert warehouses() == {warehouse.pk}

    page.locator("#warehouse-select").select_option(str(warehouse.pk))
    expect(toggle).to_have_attribute("aria-pressed", "true")
    toggle.click()  # off for the last one: the browser unsubscribes
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert not PushSubscription.objects.exists()
    assert page.evaluate("window.__unsubscribed") is True


# The browser's push service fails once (as Chromium's does without a network: "Registration
# failed - push service error"), then answers with an endpoint this server does not post to.
FAILING_PUSH_MANAGER = """
(() => {
  let tries = 0;
  PushManager.prototype.getSubscription = async function () { return null; };
  PushManager.prototype.subscribe = async function () {
    tries += 1;
    if (tries === 1) {
      throw new DOMException("Registration failed - push service error", "AbortError");
    }
    const endpoint = "https://push.example.net/wp/alice-phone";
    return {
      endpoint,
      toJSON: () => ({ endpoint, expirationTime: null, keys: %s }),
      unsubscribe: async () => true,
    };
  };
})();
"""


def test_a_failed_push_registration_says_why_on_a_handheld(open_screen, live_server, crew):
    """On a touch screen no tooltip is ever seen: the failure is said under the button, with
    what to do, and the button stays off."""
    keys = Browser("https://push.example.net/wp/alice-phone").keys
    screen = open_screen(crew, size=(360, 640), mobile=True)
    page = screen.page
    page.context.grant_permissions(["notifications"], origin=live_server.url)
    page.add_init_script(FAILING_PUSH_MANAGER % json.dumps(keys))
    page.reload()
    page.locator("#bell-button").tap()
    toggle = page.get_by_role("button", name="Push alerts")
    message = page.locator("#push-message")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(message).to_be_hidden()

    toggle.tap()

    expect(message).to_be_visible()
    expect(message).to_have_text(
        "Push alerts are off: the browser's push service could not be reached. "
        "Check the network, then tap Push alerts again."
    )
    expect(toggle).to_have_attribute("aria-pressed", "false")
    shown = message.bounding_box()  # on the screen, to be read where it is
    assert shown is not None
    assert shown["y"] >= 0
    assert shown["y"] + shown["height"] <= 640
    assert shown["x"] >= 0
    assert shown["x"] + shown["width"] <= 360
    screen.shot("53-push-failed")

    toggle.tap()  # the push service answers now, with an endpoint the server refuses

    expect(message).to_have_text(
        "Push alerts are off: push.example.net is not a push service this server sends to. "
        "Ask an administrator to allow this browser's push service."
    )
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert not PushSubscription.objects.exists()
