"""Every read-model script, composed once with its preludes (config/lua_compose.py)."""

from __future__ import annotations

from config.lua_compose import Composed
from directory import confirmed_writes  # noqa: F401  (registers the "version_check" prelude)


def _script(name: str, *preludes: str, replicated: bool = False) -> Composed:
    return Composed.of(__file__, name, preludes=(*preludes, "read_model"), replicated=replicated)


# replicated: with REDIS_WAIT_REPLICAS set, publishing waits for replicas (config/redis.py).
PUBLISH = _script("publish", "idempotency", "version_check", replicated=True)
EXPIRE = _script("expire")
FORGET_READER = _script("forget_reader")
RECORD_EVENT = _script("record_event", "idempotency")
REMIND = _script("remind")
EXPIRE_CLAIMS = _script("expire_claims")
# A live event as its stream users see it; the stream hub runs it on its asyncio client.
EVENT_READ_STATE = _script("event_read_state")

LIST = _script("list")
UNREAD = _script("unread")
SNOOZED = _script("snoozed")
MARK_READ = _script("mark_read")
MARK_ALL = _script("mark_all")

CLAIM = _script("claim", "idempotency")
RELEASE = _script("release", "idempotency")
RESOLVE = _script("resolve", "idempotency")
RELEASE_HELD = _script("release_held")
RERAISE = _script("reraise")
ESCALATE = _script("escalate")
SNOOZE = _script("snooze")
WAKE = _script("wake")
WAKE_DUE = _script("wake_due")
HISTORY = _script("history")
# SPEC 17: what a planned silence held back, woken when it ends; who is told loudly of an alert.
UNSILENCE = _script("unsilence")
ATTENTION = _script("attention")
# Once per user after a deploy from the layout before this package (manage.py migrate_read_state).
UPGRADE_USER = _script("upgrade_user")
# Once per warehouse after the deploy that brought the counts (manage.py migrate_read_state).
RECOUNT = _script("recount")

ALL: tuple[Composed, ...] = tuple(
    value for value in globals().values() if isinstance(value, Composed)
)
