"""`Idempotency-Key` (SPEC 11): a retried write finds what its first attempt stored.

One small piece that any single-slot Lua write can use:

- the app's keys.py names the record, in the hash slot of the write it guards
  (`notifications.keys.idempotency`, `messaging.keys.idempotency`), from a hash of the
  client's key so no client text reaches a key name;
- `fingerprint()` says what the request was (who, which operation, which body and target:
  the warehouse, the alert);
- a script composed with the "idempotency" prelude (config/lua_compose.py) gets
  config/lua/idempotency.lua before it, which checks the record at its top and stores it at
  its end, in the same script as the write: the write and its
  record exist together or not at all, so a request answered 503 (a timeout, a failover)
  either stored nothing or its retry with the same key finds what it stored;
- the record is in the write's slot, so a key reused for a write in another slot (another
  warehouse) would not find it. A Guard may also name the key's binding, in a slot of no
  warehouse (`notifications.keys.idempotency_binding`): the fingerprint of the request the
  key was first used for. On one Redis the guarded script checks and writes it with the
  record; on Redis Cluster it lives on another master, so `Guard.script_keys()` binds the
  key first, in a call of its own (one round trip more, for requests with a key only). A
  retry then finds its own fingerprint there and goes on to the record; any other request
  with the key is KeyReused (422);
- `Guard` carries a request's keys and fingerprint into the script's last KEYS and ARGV,
  and `Guard.replayed(reply)` reads a reply back: None when the script wrote, else the first
  attempt's answer and reply, or KeyReused (422) when the key came with another request.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from config.errors import DomainError, ErrorKind, Invalid
from config.redis import LuaScript, as_text, get_redis

MAX_KEY_LENGTH = 255
HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"

# The header as the OpenAPI schema shows it on the endpoints that take it.
OPENAPI_HEADER = OpenApiParameter(
    HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "1-255 printable characters. A repeat by the same user with the same key within 24 h "
        "answers what the first request answered (header Idempotent-Replayed: true) and "
        "stores nothing; the same key with a different request is 422."
    ),
)

_REPLAY = b"idempotent-replay"
_bind = LuaScript.beside(__file__, "idempotency_bind")


class KeyReused(DomainError):
    """The Idempotency-Key was used before with another request (422)."""

    kind = ErrorKind.UNPROCESSABLE
    default_code = "idempotency_key_reused"


def clean_key(value: str | None) -> str | None:
    """The client's key (None: the request has none); Invalid (400) when it is not 1 to 255
    printable ASCII characters."""
    if value is None:
        return None
    if not value or len(value) > MAX_KEY_LENGTH or not all(" " <= c <= "~" for c in value):
        raise Invalid(
            _("An Idempotency-Key must be 1 to %(limit)d printable characters.")
            % {"limit": MAX_KEY_LENGTH},
            field=HEADER,
            code="invalid_idempotency_key",
        )
    return value


def key_of(request: Request) -> str | None:
    """The request's Idempotency-Key header, checked as `clean_key` checks it."""
    return clean_key(request.headers.get(HEADER))


def answered(data: Any, *, replayed: bool, status: int = 200) -> Response:
    """The response to a request that may have been answered before: with the header
    `Idempotent-Replayed: true` when this is the first one's answer again."""
    response = Response(data, status=status)
    if replayed:
        response[REPLAYED_HEADER] = "true"
    return response


def user_scope(user_id: int) -> str:
    """The scope of a signed-in user's keys: every request they make with a key shares it."""
    return f"u:{int(user_id)}"


def key_digest(key: str) -> str:
    """What a record's key name holds of the client's key: a hash, never the text itself."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def fingerprint(*, scope: str, operation: str, request: Any) -> str:
    """A hash of who made which request with what: equal for a faithful retry only.

    `request` is what the client sent, as JSON-able values (the parsed body and the target),
    serialized canonically (sorted keys) so the order of fields does not matter.
    """
    text = json.dumps(
        [scope, operation, request], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Replay:
    """What the first attempt answered: the caller's `answer` text and the script's reply."""

    answer: str
    reply: Any


def _ttl_ms() -> int:
    return int(settings.IDEMPOTENCY_TTL_SECONDS) * 1000


def _reused() -> KeyReused:
    return KeyReused(
        _("This Idempotency-Key was used for a different request; use a new key for a new request.")
    )


@dataclass(frozen=True)
class Guard:
    """A request's record: its key name (`record`, empty for a request without a key), and
    the key's `binding` ("": the record alone guards it, within its slot)."""

    record: str
    fingerprint: str = ""
    binding: str = ""

    @classmethod
    def none(cls, same_slot_key: str) -> Guard:
        """No Idempotency-Key: the script still gets its KEYS (a key of the slot) and ""."""
        return cls(record=same_slot_key)

    @property
    def active(self) -> bool:
        return bool(self.fingerprint)

    def script_keys(self) -> list[str]:
        """The guarded script's last two KEYS: the binding, then the record (the record twice
        when the script is not to bind). On Redis Cluster the key is bound here first, in a
        call of its own: KeyReused when it is bound to another request."""
        if not (self.active and self.binding):
            return [self.record, self.record]
        if not settings.REDIS_CLUSTER:
            return [self.binding, self.record]
        if as_text(_bind(keys=[self.binding], args=[_ttl_ms(), self.fingerprint])) != (
            self.fingerprint
        ):
            raise _reused()
        return [self.record, self.record]

    def arg(self, answer: str = "") -> str:
        """The script's last ARGV; `answer` (one line) is kept for the replay to rebuild from."""
        if not self.active:
            return ""
        if "\n" in answer:
            raise ValueError("an idempotency answer must be one line")
        return f"{_ttl_ms()} {self.fingerprint}\n{answer}"

    def replayed(self, reply: Any) -> Replay | None:
        """None when the script wrote; the first attempt's Replay when the key was used
        before with the same request; KeyReused when with another (its record, or the key's
        binding, holds another fingerprint)."""
        if not (isinstance(reply, list) and len(reply) == 2 and reply[0] == _REPLAY):
            return None
        stored_print, _sep, rest = as_text(reply[1]).partition("\n")
        if stored_print != self.fingerprint:
            raise _reused()
        answer, _sep, stored_reply = rest.partition("\n")
        return Replay(answer=answer, reply=json.loads(stored_reply))


def recorded(guard: Guard) -> Replay | None:
    """What a request with this guard's key was answered before, read with a GET of its record
    (for a write whose record is stored later in the same request, by the script that writes
    it): None when there is none; KeyReused when the key came with another request."""
    if not guard.active:
        return None
    raw = get_redis().get(guard.record)
    if raw is None:
        return None
    return guard.replayed([_REPLAY, raw])
