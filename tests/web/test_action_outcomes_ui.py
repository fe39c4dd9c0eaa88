"""Outcomes on the page (SPEC 14, turn 5), in Chromium at 360x640 with touch and at 1366x768:
a press says "sent" only while its run is pending; a run the WMS refused (404) says on the
alert's card and in a toast what failed, in words, with *Try again*, which presses anew (a new
run, a new Idempotency-Key); a run that succeeds says "done". The runs are sent by a real
Celery worker process through the outbox, to the WMS's webhook over real HTTPS. And an action
the alert's data gives nothing to scan for is shown disabled, with the reason, in English and
Chinese."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from actions.models import ActionRun, AlertAction
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.actions.conftest import (  # noqa: F401  (shared_database: a fixture)
    QUEUES,
    fresh_connections,
    shared_database,
)
from tests.workers import worker_process

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

# name -> (viewport, a handheld: touch and a mobile viewport)
SIZES: dict[str, tuple[tuple[int, int], bool]] = {
    "handheld": ((360, 640), True),
    "desktop": ((1366, 768), False),
}


@pytest.fixture
def alice(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> User:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


def act(locator, mobile: bool) -> None:
    """A finger on a handheld, the mouse on a desk."""
    if mobile:
        locator.tap()
    else:
        locator.click()


def fits(page, width: int) -> None:
    shown = page.evaluate("document.documentElement.scrollWidth")
    assert shown <= width, f"the page is {shown} px wide at {width}"


def whole(locator) -> bool:
    """Its text is shown in full: not cut, not clamped."""
    return locator.evaluate(
        "e => e.scrollHeight <= e.clientHeight + 1 && e.scrollWidth <= e.clientWidth + 1"
    )


def big_enough(locator) -> None:
    box = locator.bounding_box()
    assert box is not None
    assert box["width"] >= 44, box
    assert box["height"] >= 44, box


@pytest.mark.usefixtures("shared_database")  # the worker process sees what the test wrote
@pytest.mark.parametrize("size", list(SIZES))
def test_a_failed_action_says_what_failed_and_try_again_presses_anew(
    open_screen, alice, warehouse, rep_notice, receiver, size
):
    viewport, mobile = SIZES[size]
    width = viewport[0]
    AlertAction.objects.create(
        message_type=rep_notice, code="bin-refilled", label="Bin refilled", url=receiver.url()
    )
    publish(
        message_type="REP_NOTICE",
        warehouse=warehouse,
        title="Replenish A-01-03",
        data={"bin": "A-01-03", "qty": -12},
    )
    receiver.answer((404, "{}"))
    receiver.hold()  # the WMS takes the call and does not answer yet

    with worker_process(prepare=fresh_connections, queues=QUEUES):
        screen = open_screen(alice, size=viewport, mobile=mobile)
        page = screen.page
        card = page.locator("#inbox-list .inbox-entry", has_text="Replenish A-01-03")
        act(card.locator(".inbox-item"), mobile)
        act(
            page.locator("#dialog-alert-actions").get_by_role("button", name="Bin refilled"), mobile
        )

        # Pending: "sent", and nothing more.
        expect(page.locator("#toasts")).to_contain_text("Bin refilled: sent to the WMS.")
        pending = page.locator("#dialog-alert-actions .run-pending")
        expect(pending).to_contain_text("Bin refilled: sent to the WMS, waiting for its answer")
        screen.shot(f"80-action-pending-{size}")
        receiver.release()  # the WMS answers 404

        toast = page.locator("#toasts .toast")
        expect(toast).to_contain_text("Bin refilled: failed.")
        expect(toast.locator(".toast-body")).to_have_attribute(
            "title", "Bin refilled: failed. The WMS answered 404 (Not Found)."
        )
        toast_retry = toast.get_by_role("button", name="Try again")
        expect(toast_retry).to_be_visible()
        big_enough(toast_retry)
        expect(page.locator("#dialog-alert-actions .run-failed")).to_contain_text(
            "The WMS answered 404 (Not Found)."
        )
        screen.shot(f"81-action-failed-toast-{size}")
        body = toast.locator(".toast-body")
        assert whole(body), body.evaluate(
            "e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight].join(' ')"
        )
        act(page.locator("#notification-dialog .dialog-close"), mobile)

        failed = card.locator(".run-failed")
        expect(failed).to_contain_text("Bin refilled: failed. The WMS answered 404 (Not Found).")
        expect(card).to_contain_text("Claimed by alice")  # a failed run leaves it claimed
        retry = failed.get_by_role("button", name="Try again")
        expect(retry).to_be_visible()
        big_enough(retry)
        if mobile:
            fits(page, width)
        screen.shot(f"82-action-failed-card-{size}")

        act(retry, mobile)  # a new press: the WMS answers 200 this time

        expect(card.locator(".run-succeeded")).to_contain_text("Bin refilled: done.")
        expect(card.locator(".run-failed")).to_have_count(0)
        expect(page.locator("#toasts")).to_contain_text("Bin refilled: done.")
        screen.shot(f"83-action-done-{size}")

    first, second = receiver.calls
    runs = list(ActionRun.objects.order_by("created_at"))
    assert [r.status for r in runs] == ["failed", "succeeded"]
    # Two presses, each with a key of its own; each run its own Idempotency-Key to the WMS.
    assert runs[0].idempotency_key
    assert runs[1].idempotency_key
    assert runs[0].idempotency_key != runs[1].idempotency_key
    assert first.headers["idempotency-key"] == str(runs[0].pk)
    assert second.headers["idempotency-key"] == str(runs[1].pk)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize(
    ("locale", "label", "reason"),
    [
        ("en-US", "Replenishment task created", "does not say which bin to scan"),
        ("zh-CN", "已创建补货任务", "无法"),
    ],
)
def test_an_action_the_alert_gives_nothing_to_scan_for_is_disabled_with_the_reason(
    open_screen, alice, warehouse, rep_notice, receiver, size, locale, label, reason
):
    viewport, mobile = SIZES[size]
    AlertAction.objects.create(
        message_type=rep_notice,
        code="task-created",
        label="Replenishment task created",
        label_zh="已创建补货任务",
        url=receiver.url(),
        confirm_field="bin",
    )
    publish(message_type="REP_NOTICE", warehouse=warehouse, title="Replenish by hand", data={})
    screen = open_screen(alice, locale=locale, size=viewport, mobile=mobile)
    page = screen.page
    card = page.locator("#inbox-list .inbox-entry", has_text="Replenish by hand")
    act(card.locator(".inbox-item"), mobile)

    actions = page.locator("#dialog-alert-actions")
    button = actions.get_by_role("button", name=label)
    expect(button).to_be_disabled()
    expect(actions.locator(".action-reason")).to_contain_text(reason)
    expect(button).to_have_attribute(
        "aria-describedby", actions.locator(".action-reason").get_attribute("id")
    )
    assert whole(actions.locator(".action-reason"))
    if mobile:
        fits(page, viewport[0])
    screen.shot(f"84-action-unavailable-{size}-{locale}")
    expect(page.locator("#action-dialog")).not_to_be_visible()
    assert not ActionRun.objects.exists()
