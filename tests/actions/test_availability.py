"""An action that can never run on an alert is not offered as if it could (SPEC 14, "Outcomes
on the page"): when the alert's `data` lacks the action's `confirm_field`, N's `actions` entry
says `"available": false` with the reason, in the caller's language, and a press answers 409
without scanning in vain; the scan is asked for in words (`confirm_label`), never by the raw
key; the admin warns when recent alerts of the type lack the key; and the README's own
command and the demo publish the data their action scans."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from actions.models import ActionRun, AlertAction
from notifications.selectors import inbox_page
from outbox.models import OutboxMessage

BASE_DIR = Path(django_settings.BASE_DIR)


def shown(client, warehouse, language: str = "en") -> dict[str, dict]:
    """Each alert's `actions` by title."""
    page = client.get(
        "/api/v1/notifications/",
        {"warehouse": warehouse.pk, "include_read": "true"},
        HTTP_ACCEPT_LANGUAGE=language,
    ).json()
    return {n["title"]: n["actions"] for n in page["results"]}


@pytest.mark.django_db
def test_an_action_whose_field_the_alert_lacks_is_offered_disabled_with_the_reason(
    replenishers, warehouse, make_action, send, press, client_for, receiver
):
    rita, _ = replenishers
    make_action(confirm_field="bin")
    make_action("noted", label="Noted")  # nothing to scan: always available
    send("Replenish A-01-03")  # data {"bin": "A-01-03", ...}
    bare = send("Replenish by hand", data={})
    client = client_for(rita)

    actions = shown(client, warehouse)
    assert actions["Replenish A-01-03"] == [
        {
            "code": "task-created",
            "label": "Replenishment task created",
            "confirm_field": "bin",
            "confirm_label": "Scan the bin",
            "available": True,
            "reason": None,
        },
        {
            "code": "noted",
            "label": "Noted",
            "confirm_field": None,
            "confirm_label": None,
            "available": True,
            "reason": None,
        },
    ]
    lacking, noted = actions["Replenish by hand"]
    assert (lacking["code"], lacking["available"]) == ("task-created", False)
    assert lacking["reason"] == (
        "This alert does not say which bin to scan (its data has no “bin”), "
        "so this action cannot run on it."
    )
    assert noted["available"] is True
    zh = shown(client, warehouse, "zh-hans")["Replenish by hand"][0]
    assert zh["available"] is False
    assert "bin" in zh["reason"]
    assert "无法" in zh["reason"]
    assert zh["confirm_label"] == "扫描 bin"

    # Pressing it anyway (an older page, another client) answers why, and nothing runs.
    refused = press(rita, bare.id, "task-created", scan="A-01-03")
    assert refused.status_code == 409
    assert refused.json() == {"detail": lacking["reason"], "field": "bin"}
    assert not ActionRun.objects.exists()
    assert not OutboxMessage.objects.exists()
    assert receiver.calls == []


@pytest.mark.django_db
def test_the_scan_is_asked_for_in_the_words_the_admin_gave(
    replenishers, warehouse, make_action, send, client_for
):
    rita, _ = replenishers
    make_action(
        confirm_field="bin", confirm_label="Scan the bin label", confirm_label_zh="扫描库位"
    )
    send()
    client = client_for(rita)

    assert shown(client, warehouse)["Replenish A-01-03"][0]["confirm_label"] == (
        "Scan the bin label"
    )
    assert shown(client, warehouse, "zh-hans")["Replenish A-01-03"][0]["confirm_label"] == (
        "扫描库位"
    )


@pytest.mark.django_db
def test_the_event_stream_says_the_same(replenishers, warehouse, make_action, send):
    from actions import catalog
    from stream.events import item_data

    rita, _ = replenishers
    make_action(confirm_field="bin")
    send("Replenish by hand", data={"qty": -3})
    catalog.current()  # held, as the stream's hub loads it before its loop serializes
    [item] = inbox_page(user=rita, warehouse_id=warehouse.pk).items

    [action] = json.loads(item_data(item))["actions"]

    assert action["available"] is False
    assert "bin" in action["reason"]


# --- The admin -------------------------------------------------------------------------------


@pytest.fixture
def boss(client, make_user):
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    return client


def add_action(client, rep_notice, receiver, **fields):
    form = {
        "message_type": rep_notice.pk,
        "code": "task-created",
        "label": "Replenishment task created",
        "label_zh": "",
        "url": receiver.url(),
        "confirm_field": "bin",
        "confirm_label": "",
        "confirm_label_zh": "",
        "is_active": "on",
        **fields,
    }
    return client.post("/admin/actions/alertaction/add/", form, follow=True)


def warnings(response) -> list[str]:
    return [m.message for m in response.context["messages"] if m.level_tag == "warning"]


@pytest.mark.django_db
def test_the_admin_warns_when_recent_alerts_of_the_type_lack_the_field(
    boss, replenishers, rep_notice, send, receiver
):
    send("Replenish A-01-03")
    send("Replenish by hand", data={})
    send("Replenish by phone", data={"qty": -1})

    saved = add_action(boss, rep_notice, receiver)

    assert AlertAction.objects.filter(code="task-created").exists()  # a warning, not a refusal
    [warning] = warnings(saved)
    assert "2 of the 3 most recent REP_NOTICE alerts" in warning
    assert "“bin”" in warning
    assert "shown disabled" in warning


@pytest.mark.django_db
def test_the_admin_says_nothing_when_the_alerts_carry_the_field(
    boss, replenishers, rep_notice, send, receiver
):
    send("Replenish A-01-03")
    send("Replenish B-02-01", data={"bin": "B-02-01"})

    saved = add_action(boss, rep_notice, receiver)

    assert AlertAction.objects.filter(code="task-created").exists()
    assert warnings(saved) == []
    # Nothing to scan: nothing to check either.
    assert warnings(add_action(boss, rep_notice, receiver, code="noted", confirm_field="")) == []


@pytest.mark.django_db
def test_the_admin_warns_from_the_message_types_inline_too(
    boss, replenishers, rep_notice, send, receiver
):
    send("Replenish by hand", data={})
    form = {
        "code": "REP_NOTICE",
        "name": rep_notice.name,
        "description": "",
        "is_active": "on",
        "default_ttl_seconds": rep_notice.default_ttl_seconds,
        "default_severity": rep_notice.default_severity,
        "remind_max": 3,
        "alert_actions-TOTAL_FORMS": 1,
        "alert_actions-INITIAL_FORMS": 0,
        "alert_actions-0-code": "task-created",
        "alert_actions-0-label": "Replenishment task created",
        "alert_actions-0-url": receiver.url(),
        "alert_actions-0-confirm_field": "bin",
        "alert_actions-0-is_active": "on",
    }
    page = boss.get(f"/admin/subscriptions/messagetype/{rep_notice.pk}/change/")
    for name in re.findall(r'name="([^"]+-TOTAL_FORMS)"', page.content.decode()):
        if not name.startswith("alert_actions"):
            prefix = name.removesuffix("-TOTAL_FORMS")
            form.update({name: 0, f"{prefix}-INITIAL_FORMS": 0})

    saved = boss.post(
        f"/admin/subscriptions/messagetype/{rep_notice.pk}/change/", form, follow=True
    )

    assert AlertAction.objects.filter(code="task-created").exists(), saved.content[-3000:]
    [warning] = warnings(saved)
    assert "The most recent REP_NOTICE alert does not carry “bin”" in warning


# --- What the README and the demo publish ---------------------------------------------------


def readme_publish() -> list[str]:
    """The README's second-terminal command, as a shell would split it."""
    text = (BASE_DIR / "README.md").read_text()
    [line] = [x.strip() for x in text.splitlines() if "manage.py publish" in x]
    return shlex.split(line)


def data_of(words: list[str]) -> dict:
    return json.loads(words[words.index("--data") + 1]) if "--data" in words else {}


def test_the_readmes_publish_carries_the_data_the_demos_action_scans():
    from demo.data import DEMO_ACTION

    words = readme_publish()
    assert words[words.index("--type") + 1] == "REP_NOTICE"
    assert DEMO_ACTION["confirm_field"] in data_of(words)


def test_the_demos_banner_shows_the_same_command():
    from demo.management.commands.demo import SECOND_TERMINAL

    banner = shlex.split(SECOND_TERMINAL)
    assert banner[banner.index("manage.py") :] == readme_publish()[1:]


def test_the_demos_action_asks_for_the_scan_in_words():
    from demo.data import DEMO_ACTION

    assert DEMO_ACTION["confirm_label"] == "Scan the bin"
    assert DEMO_ACTION["confirm_label_zh"] == "扫描库位"


@pytest.mark.django_db
def test_the_demos_rules_publish_the_data_the_demos_action_scans(warehouse, rep_notice):
    from demo.data import DEMO_ACTION
    from inventory.models import Bin
    from inventory.rules import BinStockOut, NegativeBinStock

    Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12)
    for rule in (NegativeBinStock(), BinStockOut()):
        for alert in rule.alerts():
            assert DEMO_ACTION["confirm_field"] in alert.data
