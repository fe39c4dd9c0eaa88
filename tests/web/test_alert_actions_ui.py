"""Scan to confirm on a handheld (SPEC 14), in Chromium at 360x640 (touch), in English and
Chinese: an alert's action opens a dialog whose field has focus and says in words what to scan
(never the data's key), a keyboard-wedge scanner types into it and its Enter submits; a
mismatch says so next to the field and nothing runs; the right scan runs the action once (the
WMS's webhook, a real HTTPS receiver, gets one call), the resolving action resolves the alert,
and the dialog says it is done."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from actions.models import ActionRun, AlertAction
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("opens_on_sh01")]

HANDHELD = {"size": (360, 640), "mobile": True}


@pytest.fixture
def alice(make_user, role: Group, warehouse: Warehouse, rep_notice: MessageType) -> User:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("alice", role)


@pytest.fixture
def task_created(rep_notice, receiver) -> AlertAction:
    return AlertAction.objects.create(
        message_type=rep_notice,
        code="task-created",
        label="Replenishment task created",
        label_zh="已创建补货任务",
        url=receiver.url(),
        resolves=True,
        confirm_field="bin",
        confirm_label_zh="扫描库位",  # English: none given, so "Scan the bin"
    )


def fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page is {width} px wide at 360"


@pytest.mark.parametrize(
    ("locale", "label", "prompt", "mismatch", "done"),
    [
        (
            "en-US",
            "Replenishment task created",
            "Scan the bin",
            "not what this alert asks for",
            "Replenishment task created: done.",
        ),
        ("zh-CN", "已创建补货任务", "扫描库位", "请重新扫描", "已创建补货任务：已完成。"),  # noqa: RUF001
    ],
)
def test_scan_to_confirm_on_a_handheld(
    open_screen,
    alice,
    warehouse,
    task_created,
    receiver,
    celery_eager,
    locale,
    label,
    prompt,
    mismatch,
    done,
):
    publish(
        message_type="REP_NOTICE",
        warehouse=warehouse,
        title="Replenish A-01-03",
        data={"bin": "A-01-03", "qty": -12},
    )
    screen = open_screen(alice, locale=locale, **HANDHELD)
    page = screen.page
    page.locator("#inbox-list .inbox-entry", has_text="Replenish A-01-03").locator(
        ".inbox-item"
    ).tap()
    button = page.locator("#dialog-alert-actions").get_by_role("button", name=label)
    expect(button).to_be_visible()
    # At least 44x44 CSS px (awaited: the dialog draws its buttons again as polls come).
    page.wait_for_function(
        """() => { const e = document.querySelector("#dialog-alert-actions [data-alert-action]");
                   if (!e) return false;
                   const r = e.getBoundingClientRect();
                   return r.width >= 44 && r.height >= 44; }""",
        timeout=5000,
    )
    button.tap()

    field = page.locator("#action-scan")
    expect(field).to_be_focused()  # the scanner types here without a tap
    expect(page.locator("#action-scan-label")).to_have_text(prompt)  # words, not "bin"
    page.keyboard.type("A-01-04")
    page.keyboard.press("Enter")  # the scanner's Enter

    error = page.locator("#action-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text(mismatch)
    expect(field).to_be_focused()
    fits(page)
    screen.shot(f"70-scan-mismatch-{locale}")
    assert not ActionRun.objects.exists()
    assert receiver.calls == []

    page.keyboard.type("a-01-03")  # the next scan replaces the wrong one (it is selected)
    page.keyboard.press("Enter")

    expect(page.locator("#action-dialog")).not_to_be_visible()
    [run] = ActionRun.objects.all()
    assert run.scan == "a-01-03"
    assert len(receiver.calls) == 1
    assert receiver.calls[0].headers["idempotency-key"] == str(run.pk)
    expect(page.locator("#dialog-status")).to_contain_text("alice")  # resolved by alice
    actions = page.locator("#dialog-alert-actions")
    expect(actions.locator("[data-alert-action]")).to_have_count(0)  # resolved: none to press
    expect(actions.locator(".run-succeeded")).to_contain_text(done)
    fits(page)
    screen.shot(f"71-scan-done-{locale}")
