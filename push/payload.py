"""What a push carries: the alert, small enough for every push service once encrypted."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

# Push services take at most 4096 bytes of encrypted body; aes128gcm adds 86 bytes of header,
# a padding delimiter and a 16-byte tag (RFC 8188, 8291), so the plain text must stay below
# 3993 bytes. A margin is kept.
MAX_PLAIN_BYTES = 3800
# The longest TTL push services keep (FCM: 4 weeks).
MAX_TTL_SECONDS = 28 * 24 * 3600
ELLIPSIS = "…"


@dataclass(frozen=True)
class Alert:
    """The notification as it was when it reached the users (published or escalated)."""

    id: str
    warehouse: int
    title: str
    body: str
    severity: str
    status: str
    expires_at_ms: int
    # A withdrawal (SPEC 17): who claimed it ("Claimed by bob" replaces the alert shown on other
    # members' devices), or `close` when it was resolved (the service worker closes it).
    claimed_by: str | None = None
    close: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Alert:
        return cls(**value)

    @property
    def url(self) -> str:
        """Where the page opens it: the warehouse page showing this warehouse."""
        return f"/?warehouse={self.warehouse}&notification={self.id}"

    def ttl_seconds(self, now_ms: int) -> int:
        """Its remaining life (0: expired, nothing to send)."""
        return max(0, min(MAX_TTL_SECONDS, math.ceil((self.expires_at_ms - now_ms) / 1000)))

    @property
    def urgency(self) -> str:
        return "high" if self.severity == "critical" else "normal"

    @property
    def topic(self) -> str:
        """The push services' Topic (at most 32 base64url characters): a later push of the
        same alert (its escalation) replaces one not yet delivered."""
        return self.id.replace("-", "")[:32]


def encode(alert: Alert) -> bytes:
    """The JSON the service worker receives: {"id", "warehouse", "title", "body", "severity",
    "status", "url"}, and for a withdrawal "claimed_by" (a claim) or "close": true (a resolve);
    the body (then the title) shortened with "…" to fit MAX_PLAIN_BYTES."""
    withdrawal: dict[str, Any] = {}
    if alert.claimed_by is not None:
        withdrawal["claimed_by"] = alert.claimed_by
    if alert.close:
        withdrawal["close"] = True

    def dumps(title: str, body: str) -> bytes:
        return json.dumps(
            {
                "id": alert.id,
                "warehouse": alert.warehouse,
                "title": title,
                "body": body,
                "severity": alert.severity,
                "status": alert.status,
                "url": alert.url,
                **withdrawal,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()

    data = dumps(alert.title, alert.body)
    if len(data) <= MAX_PLAIN_BYTES:
        return data
    title = alert.title
    if len(dumps(title, ELLIPSIS)) > MAX_PLAIN_BYTES:
        title = _longest(alert.title, lambda cut: dumps(cut, ""))
        return dumps(title, "")
    return dumps(title, _longest(alert.body, lambda cut: dumps(title, cut)))


def _longest(text: str, encoded: Callable[[str], bytes]) -> str:
    """The longest start of `text`, with "…", whose `encoded(...)` fits (binary search)."""
    low, high = 0, len(text)  # text[:low] + "…" fits; text[:high + 1] + "…" does not
    while low < high:
        middle = (low + high + 1) // 2
        if len(encoded(text[:middle] + ELLIPSIS)) <= MAX_PLAIN_BYTES:
            low = middle
        else:
            high = middle - 1
    return text[:low] + ELLIPSIS
