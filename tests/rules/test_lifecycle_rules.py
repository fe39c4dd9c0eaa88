"""Rules and the alert lifecycle: keys and severity flow in, cleared alerts resolve themselves,
reminders of still-open alerts re-raise the same notification (SPEC section 7)."""

from __future__ import annotations

import pytest

from notifications import lifecycle, selectors, services
from notifications.selectors import inbox_page, unread_summary
from rules import Alert, runner, sources

from .conftest import alert


def run(name: str = "shortages"):
    return runner.run_rule(sources.find_rule(name))


@pytest.fixture
def colleague(rita, role, make_user):
    return make_user("ralf", role)


def only(user, warehouse):
    (item,) = inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
    return item


def test_the_alert_key_and_severity_reach_the_notification(make_rule, rita, warehouse, inbox):
    make_rule(alerts=[alert(warehouse, severity="critical")])

    run()

    (item,) = inbox(rita, warehouse)
    assert (item["key"], item["severity"], item["status"]) == ("A-01-03", "critical", "open")


def test_an_alert_refuses_an_unknown_severity(warehouse):
    with pytest.raises(ValueError, match="severity"):
        Alert(warehouse=warehouse, title="x", severity="urgent")


def test_a_cleared_condition_resolves_its_alert_by_the_system(make_rule, rita, warehouse):
    rule = make_rule(alerts=[alert(warehouse, "A-01-03"), alert(warehouse, "A-01-04")])
    run()
    first = {i.notification.key: i for i in inbox_page(user=rita, warehouse_id=warehouse.pk).items}
    lifecycle.claim(
        user=rita, warehouse_id=warehouse.pk, notification_id=first["A-01-04"].notification.id
    )
    rule.current = []  # both bins replenished

    run()

    items = inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True).items
    assert {(i.notification.key, i.lifecycle.status) for i in items} == {
        ("A-01-03", "resolved"),
        ("A-01-04", "resolved"),
    }
    assert all(i.lifecycle.resolved_by is None and i.lifecycle.resolved_at_ms for i in items)
    events = selectors.history(
        user=rita, warehouse_id=warehouse.pk, notification_id=first["A-01-03"].notification.id
    )
    assert events is not None
    assert [(e.event, e.by) for e in events] == [("published", None), ("resolved", None)]
    assert unread_summary(user=rita, warehouse_id=warehouse.pk).unread_count == 0


def test_a_reminder_of_an_open_alert_raises_the_same_one_again(
    make_rule, rita, colleague, warehouse
):
    make_rule(alerts=[alert(warehouse)], cooldown=0)  # every run is a reminder
    run()
    original = only(rita, warehouse)
    services.mark_read(user=rita, warehouse_id=warehouse.pk, ids=None)
    services.mark_read(user=colleague, warehouse_id=warehouse.pk, ids=None)

    reminder = run()

    assert (reminder.sent, reminder.recipients) == (1, 1)
    again = only(rita, warehouse)
    assert again.notification.id == original.notification.id
    assert again.lifecycle.occurrences == 2
    assert again.cursor > original.cursor
    for user in (rita, colleague):  # unread again for everyone
        assert unread_summary(user=user, warehouse_id=warehouse.pk).unread_count == 1
    events = selectors.history(
        user=rita, warehouse_id=warehouse.pk, notification_id=original.notification.id
    )
    assert events is not None
    assert [e.event for e in events] == ["published", "reraised"]
    run()
    assert only(rita, warehouse).lifecycle.occurrences == 3


def test_a_reminder_keeps_the_claim(make_rule, rita, colleague, warehouse):
    make_rule(alerts=[alert(warehouse)], cooldown=0)
    run()
    note_id = only(rita, warehouse).notification.id
    lifecycle.claim(user=rita, warehouse_id=warehouse.pk, notification_id=note_id)

    run()

    item = only(colleague, warehouse)
    assert item.lifecycle.status == "claimed"
    assert item.lifecycle.occurrences == 2
    assert item.lifecycle.claimed_by.username == "rita"


def test_a_reminder_after_a_person_resolved_it_is_a_new_alert(make_rule, rita, warehouse):
    make_rule(alerts=[alert(warehouse)], cooldown=0)
    run()
    first = only(rita, warehouse).notification.id
    lifecycle.resolve(user=rita, warehouse_id=warehouse.pk, notification_id=first)

    run()

    items = inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True).items
    assert len(items) == 2
    (new,) = [i for i in items if i.notification.id != first]
    assert new.lifecycle.status == "open"
    assert new.lifecycle.occurrences == 1
    assert unread_summary(user=rita, warehouse_id=warehouse.pk).unread_count == 1


def test_a_flapping_condition_folds_into_its_latest_alert_and_the_rule_still_manages_it(
    make_rule, rita, colleague, warehouse, settings
):
    settings.FLAP_MAX, settings.FLAP_WINDOW_SECONDS = 3, 900
    rule = make_rule(alerts=[alert(warehouse)], cooldown=0)
    for _ in range(3):  # the bin goes short and is refilled three times: three alerts
        rule.current = [alert(warehouse)]
        run()
        rule.current = []
        run()
    made = inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True).items
    assert len(made) == 3
    assert {i.lifecycle.status for i in made} == {"resolved"}
    latest = max(made, key=lambda i: i.notification.created_at_ms).notification.id

    rule.current = [alert(warehouse)]
    flapped = run()  # a fourth time: no new alert, the latest is open again, quietly

    assert flapped.sent == 1
    items = inbox_page(user=rita, warehouse_id=warehouse.pk, include_read=True).items
    assert len(items) == 3
    (back,) = [i for i in items if i.notification.id == latest]
    assert (back.lifecycle.status, back.lifecycle.flapping) == ("open", True)
    assert unread_summary(user=colleague, warehouse_id=warehouse.pk).unread_count == 1

    run()  # still short: the rule's reminder raises the same one again, loudly as before
    again = only_with(rita, warehouse, latest)
    assert again.lifecycle.occurrences == 3
    rule.current = []
    run()  # refilled: resolved by the system again
    assert only_with(rita, warehouse, latest).lifecycle.status == "resolved"
    events = selectors.history(user=rita, warehouse_id=warehouse.pk, notification_id=latest)
    assert events is not None
    assert [e.event for e in events] == [
        "published",
        "resolved",
        "flapping",
        "reraised",
        "resolved",
    ]


def only_with(user, warehouse, notification_id):
    items = inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
    (item,) = [i for i in items if i.notification.id == notification_id]
    return item
