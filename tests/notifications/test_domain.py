"""notifications.domain: parsing a stored notification."""

from __future__ import annotations

import pytest

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


def test_a_shared_notifications_data_cannot_be_changed():
    """Notification.from_json hands the same parsed notification to every request and thread:
    its data, at every depth, refuses changes in place, and still reads and serializes as the
    JSON it was."""
    import copy
    import json as stdlib_json
    import pickle

    import orjson

    from notifications.domain import Notification

    raw = (
        '{"id":"n1","message_type":"REP","warehouse":1,"title":"t","body":"",'
        '"data":{"bin":"A-01","tags":["x",{"deep":1}]},"created_at_ms":1,"expires_at_ms":2}'
    )
    shared = Notification.from_json(raw)
    assert Notification.from_json(raw) is shared
    data = shared.data
    changes = [
        lambda: data.__setitem__("bin", "B"),
        lambda: data.update(bin="B"),
        lambda: data.pop("bin"),
        lambda: data.setdefault("new", 1),
        lambda: data.clear(),
        lambda: data["tags"].append("y"),
        lambda: data["tags"].__setitem__(0, "y"),
        lambda: data["tags"][1].__setitem__("deep", 2),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    with pytest.raises(TypeError):
        data |= {"bin": "B"}

    expected = {"bin": "A-01", "tags": ["x", {"deep": 1}]}
    assert data == expected
    assert isinstance(data, dict)
    assert stdlib_json.loads(stdlib_json.dumps(data)) == expected
    assert orjson.loads(orjson.dumps(data)) == expected
    assert copy.deepcopy(data) == expected
    assert pickle.loads(pickle.dumps(data)) == expected  # noqa: S301 (our own bytes)
    mine = dict(data)  # a copy is the caller's own
    mine["bin"] = "B"
    assert Notification.from_json(raw).data["bin"] == "A-01"
