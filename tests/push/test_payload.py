"""What a push carries: the SPEC's keys, within the size every push service accepts."""

from __future__ import annotations

import json
from typing import Any

from push.payload import MAX_PLAIN_BYTES, MAX_TTL_SECONDS, Alert, encode


def alert(**changes) -> Alert:
    values = {
        "id": "6518a8e0-b4be-4ea0-bc5f-5c0e653e7bfc",
        "warehouse": 3,
        "title": "Stock-out A-01-03",
        "body": "Pick face empty",
        "severity": "critical",
        "status": "open",
        "expires_at_ms": 1_000_000,
    }
    return Alert(**{**values, **changes})


def test_the_payload_has_exactly_the_spec_keys():
    content = json.loads(encode(alert()))

    assert content == {
        "id": "6518a8e0-b4be-4ea0-bc5f-5c0e653e7bfc",
        "warehouse": 3,
        "title": "Stock-out A-01-03",
        "body": "Pick face empty",
        "severity": "critical",
        "status": "open",
        "url": "/?warehouse=3&notification=6518a8e0-b4be-4ea0-bc5f-5c0e653e7bfc",
    }


def test_escaped_characters_count_as_what_they_take():
    data = encode(alert(body="\u0001" * 4000))  # six bytes each once escaped

    assert len(data) <= MAX_PLAIN_BYTES
    assert json.loads(data)["body"].endswith("…")


def test_a_title_too_long_for_a_push_is_shortened_after_the_body():
    data = encode(alert(title="告" * 2000, body="body"))

    content = json.loads(data)
    assert len(data) <= MAX_PLAIN_BYTES
    assert content["body"] == ""
    assert content["title"].startswith("告告")
    assert content["title"].endswith("…")


def test_ttl_is_the_remaining_life_rounded_up_and_capped():
    note = alert(expires_at_ms=10_000_500)

    assert note.ttl_seconds(now_ms=10_000_000) == 1
    assert note.ttl_seconds(now_ms=10_000_500) == 0
    assert note.ttl_seconds(now_ms=20_000_000) == 0
    assert note.ttl_seconds(now_ms=10_000_500 - 10**11) == MAX_TTL_SECONDS


def test_urgency_is_high_for_critical_only():
    assert alert().urgency == "high"
    assert alert(severity="warning").urgency == "normal"


def test_a_withdrawal_says_who_claimed_it_or_to_close_it():
    base: dict[str, Any] = {
        "id": "n1",
        "warehouse": 1,
        "title": "t",
        "body": "",
        "severity": "critical",
        "expires_at_ms": 1,
    }
    claimed = json.loads(encode(Alert(**base, status="claimed", claimed_by="bob")))
    resolved = json.loads(encode(Alert(**base, status="resolved", close=True)))
    plain = json.loads(encode(Alert(**base, status="open")))
    assert (claimed["claimed_by"], "close" in claimed) == ("bob", False)
    assert (resolved["close"], "claimed_by" in resolved) == (True, False)
    assert set(plain) == {"id", "warehouse", "title", "body", "severity", "status", "url"}
