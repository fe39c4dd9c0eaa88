"""An item never changed since publishing is shown the same way to everyone who reads it alike:
its answer is made once per process and shared (`serializers._shown`), read-only, found by
the parsed notification, what the user's answer adds to it and the actions list it was fitted
from, so it is never stale (tests/notifications/test_output.py checks every answer against its
serializer)."""

from __future__ import annotations

import pytest

from notifications import hooks
from notifications.api import serializers as s
from notifications.domain import InboxItem, Lifecycle, Notification, Severity


def _action(code: str, confirm_field: str | None = None) -> dict:
    return {
        "code": code,
        "label": code.title(),
        "confirm_field": confirm_field,
        "confirm_label": None,
        "available": True,
        "reason": None,
    }


@pytest.fixture
def catalog(monkeypatch) -> dict[str, list[dict]]:
    """The actions by type, as the catalog holds them: one list per type until it changes."""
    by_type = {"REPLENISH": [_action("done"), _action("moved", confirm_field="bin")]}
    monkeypatch.setattr(hooks.actions, "of", lambda code: by_type.get(code, []))
    return by_type


def _notification(**data) -> Notification:
    return Notification(
        id="6f1c2a9e-7d47-4a53-9c3e-0d2b5e1f7a10",
        message_type="REPLENISH",
        warehouse=1,
        title="Replenish A-01-03",
        body="Stock is -12 after wave 8812",
        data=data,
        created_at_ms=1_795_972_600_669,
        expires_at_ms=1_796_577_400_669,
        severity=Severity.WARNING,
    )


def test_an_unchanged_item_shown_again_is_the_same_read_only_answer(catalog):
    n = _notification(bin="A-01-03")
    first = s.notification_dict(InboxItem(n, cursor=41, read=False))
    again = s.notification_dict(InboxItem(n, cursor=41, read=False))
    assert again is first
    assert again == s.NotificationOutput(InboxItem(n, cursor=41, read=False)).data
    with pytest.raises(TypeError):
        again["read"] = True  # shared between requests: a caller copies it to change it


def test_what_a_users_answer_adds_makes_an_answer_of_its_own(catalog):
    n = _notification(bin="A-01-03")
    unread = s.notification_dict(InboxItem(n, cursor=41, read=False))
    read = s.notification_dict(InboxItem(n, cursor=41, read=True))
    quiet = s.notification_dict(InboxItem(n, cursor=41, read=False, quiet=True))
    later = s.notification_dict(InboxItem(n, cursor=57, read=False))
    assert (unread["read"], read["read"]) == (False, True)
    assert (unread["quiet"], quiet["quiet"]) == (False, True)
    assert (unread["cursor"], later["cursor"]) == (41, 57)


def test_an_action_added_to_its_type_is_shown_at_the_next_answer(catalog):
    n = _notification(bin="A-01-03")
    before = s.notification_dict(InboxItem(n, cursor=41, read=False))
    # The catalog is loaded again after any change: a new list for the type.
    catalog["REPLENISH"] = [*catalog["REPLENISH"], _action("recount")]
    after = s.notification_dict(InboxItem(n, cursor=41, read=False))
    assert [a["code"] for a in before["actions"]] == ["done", "moved"]
    assert [a["code"] for a in after["actions"]] == ["done", "moved", "recount"]


def test_an_action_its_data_cannot_confirm_is_shown_disabled_for_that_alert_only(catalog):
    with_bin = s.notification_dict(InboxItem(_notification(bin="A-01-03"), cursor=41, read=False))
    without = s.notification_dict(InboxItem(_notification(), cursor=41, read=False))
    assert [a["available"] for a in with_bin["actions"]] == [True, True]
    assert [a["available"] for a in without["actions"]] == [True, False]


def test_a_changed_or_snoozed_item_is_made_afresh(catalog):
    n = _notification(bin="A-01-03")
    claimed = InboxItem(n, cursor=41, read=False, state=Lifecycle.initial(n))
    snoozed = InboxItem(n, cursor=41, read=False, snoozed_until_ms=1_795_972_700_000)
    for item in (claimed, snoozed):
        first, again = s.notification_dict(item), s.notification_dict(item)
        assert again is not first
        assert again == first
        again["read"] = True  # the caller's own


def test_a_type_without_actions_is_shown_its_first_action_at_the_next_answer(monkeypatch):
    from actions.catalog import Catalog, Entry

    held = {"catalog": Catalog.of({})}
    monkeypatch.setattr(hooks.actions, "of", lambda code: held["catalog"].actions(code, "en"))
    # Every type without actions shares one list, so its items' answers are kept too.
    assert held["catalog"].actions("REPLENISH", "en") is held["catalog"].actions("X", "zh-hans")
    n = _notification(bin="A-01-03")
    first = s.notification_dict(InboxItem(n, cursor=41, read=False))
    assert s.notification_dict(InboxItem(n, cursor=41, read=False)) is first
    assert first["actions"] == []
    entry = Entry(
        id=1,
        type_code="REPLENISH",
        code="counted",
        label="Bin counted",
        label_zh="",
        confirm_field="",
        confirm_label="",
        confirm_label_zh="",
        resolves=False,
    )
    held["catalog"] = Catalog.of({"REPLENISH": (entry,)})  # loaded again after the change
    after = s.notification_dict(InboxItem(n, cursor=41, read=False))
    assert [a["code"] for a in after["actions"]] == ["counted"]
