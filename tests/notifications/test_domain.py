"""notifications.domain: parsing a stored notification."""

from __future__ import annotations

from notifications import domain
from notifications.domain import Notification


def note(i: int) -> Notification:
    return Notification(
        id=f"id-{i}",
        message_type="REP_NOTICE",
        warehouse=1,
        title=f"Replenish A-01-{i:02d}",
        body="Stock is -12 after wave 8812",
        data={"bin": f"A-01-{i:02d}", "qty": -12, "tags": ["wave", 8812]},
        created_at_ms=1_764_115_200_000 + i,
        expires_at_ms=1_764_720_000_000,
        severity="warning",
        key=None if i % 2 else f"bin:{i}",
    )


def test_a_stored_notification_parses_to_what_was_stored():
    for i in range(5):
        stored = note(i)
        assert Notification.from_json(stored.to_json()) == stored
        assert Notification.from_json(stored.to_json().encode()) == stored


def test_parsed_notifications_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(domain, "PARSED_KEPT", 10)
    monkeypatch.setattr(domain, "_parsed", {})
    texts = [note(i).to_json() for i in range(25)]
    for text in texts:
        Notification.from_json(text)
        assert len(domain._parsed) <= 10
    # Whatever was dropped parses again, to the same notification.
    assert [Notification.from_json(t) for t in texts] == [note(i) for i in range(25)]
