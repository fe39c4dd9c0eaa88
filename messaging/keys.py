"""Redis key names of chats: the only place that builds them.

Every key of one chat carries the hash tag `{chat:<id>}`, and every key of one user the tag
`{user:<id>}`, so each Lua script touches a single Redis Cluster slot. What spans slots (a
user's chat list, the activity index) is written with separate single-slot commands; see
messaging/store.py for why that stays correct. Stored keys outlive deploys:
tests/messaging/test_keys.py pins these exact strings.
"""

import re

from django.conf import settings

from config.idempotency import key_digest
from config.keyspace import events_channel_tag, glob_escape, match_after_prefix

# Group chats get a random id, a direct chat the ids of its pair (lower first), so the pair
# always lands on the same chat. The check keeps client input out of key names: only ids of
# these two forms ever reach Redis.
GROUP_CHAT_ID = re.compile(r"g-[0-9a-f]{16}")
DIRECT_CHAT_ID = re.compile(r"d-([1-9][0-9]{0,18})-([1-9][0-9]{0,18})")


def is_chat_id(chat_id: str) -> bool:
    """True for ids of the two forms this app hands out (and a direct id in its one order)."""
    if GROUP_CHAT_ID.fullmatch(chat_id):
        return True
    pair = DIRECT_CHAT_ID.fullmatch(chat_id)
    return pair is not None and int(pair[1]) < int(pair[2])


def direct_chat_id(user_a: int, user_b: int) -> str:
    """`d-<lower id>-<higher id>`: the same id whichever of the pair asks."""
    low, high = sorted((int(user_a), int(user_b)))
    if low == high:
        raise ValueError("A direct chat needs two different users.")
    return f"d-{low}-{high}"


def direct_pair(chat_id: str) -> tuple[int, int] | None:
    """The two user ids of a direct chat id, None for a group chat id."""
    pair = DIRECT_CHAT_ID.fullmatch(chat_id)
    return (int(pair[1]), int(pair[2])) if pair else None


def chat_prefix(chat_id: str) -> str:
    """`wms:{chat:<id>}`: the start of every key that belongs to one chat."""
    if not is_chat_id(chat_id):
        raise ValueError(f"Not a chat id: {chat_id!r}")
    return f"{settings.WMS_REDIS_PREFIX}:{{chat:{chat_id}}}"


def meta(chat_id: str) -> str:
    """Hash: kind, creator, created_ms, last_ms (activity), mver (membership version), last
    (the newest message's JSON, kept for previews after the message itself is cleaned up)."""
    return f"{chat_prefix(chat_id)}:meta"


def members(chat_id: str) -> str:
    """Sorted set user id -> the highest message id that member has seen (Redis in Action's
    `chat:` zset). The truth about who belongs to the chat."""
    return f"{chat_prefix(chat_id)}:members"


def joined(chat_id: str) -> str:
    """Hash user id -> the last message id when they joined: they see only messages after it."""
    return f"{chat_prefix(chat_id)}:joined"


def messages(chat_id: str) -> str:
    """Sorted set: score the message id, member the message as JSON."""
    return f"{chat_prefix(chat_id)}:msgs"


def sequence(chat_id: str) -> str:
    """String: the last message id given out in the chat."""
    return f"{chat_prefix(chat_id)}:seq"


# The suffixes of meta(), members(), joined(), messages() and sequence(), in that order.
_CHAT_KEY_PARTS = ("meta", "members", "joined", "msgs", "seq")


def chat_keys(chat_id: str) -> list[str]:
    """Every key of a chat, in the KEYS[] order all chat scripts declare (see lua/*.lua)."""
    prefix = chat_prefix(chat_id)
    return [f"{prefix}:{part}" for part in _CHAT_KEY_PARTS]


def pending_keys(chat_id: str) -> list[str]:
    """The keys fetch_pending.lua reads (members, msgs, seq): a user's fetch sends it once per
    chat, so it names only what it uses."""
    prefix = chat_prefix(chat_id)
    return [f"{prefix}:members", f"{prefix}:msgs", f"{prefix}:seq"]


def idempotency(chat_id: str, user_id: int, key: str) -> str:
    """String, for IDEMPOTENCY_TTL_SECONDS: the record of a message sent with an
    Idempotency-Key (config/idempotency.py) by a user, in the chat's slot; the key itself
    appears only as a hash."""
    return f"{chat_prefix(chat_id)}:idem:u:{int(user_id)}:{key_digest(key)}"


def events_channel(chat_id: str) -> str:
    """Pub/sub channel of a chat's new messages, for open streams (SPEC section 8).

    send.lua PUBLISHes "<member id> <member id> ...\n<message JSON>" on it in the same script
    that stores the message (deriving the name from the meta key: ":meta" -> ":events").
    """
    return f"{chat_prefix(chat_id)}:events"


def events_channel_pattern() -> str:
    """PSUBSCRIBE pattern matching every chat's events channel."""
    return f"{settings.WMS_REDIS_PREFIX}:{{chat:*}}:events"


def chat_of_channel(channel: str) -> str | None:
    """The chat id of an events channel name, None for anything else."""
    chat_id = events_channel_tag(channel, "chat")
    return chat_id if chat_id is not None and is_chat_id(chat_id) else None


def user_prefix(user_id: int) -> str:
    """`wms:{user:<id>}`: the start of every chat key that belongs to one user."""
    return f"{settings.WMS_REDIS_PREFIX}:{{user:{int(user_id)}}}"


def user_chats(user_id: int) -> str:
    """Sorted set chat id -> membership version at joining: the chats to look in.

    An index only; the chat's own members set decides (stale entries are skipped and dropped).
    """
    return f"{user_prefix(user_id)}:chats"


def contacts(user_id: int) -> str:
    """List of user ids, most recent first, capped (Redis in Action 6.1.1 recent contacts)."""
    return f"{user_prefix(user_id)}:contacts"


def activity() -> str:
    """Sorted set chat id -> last activity in ms: the retention sweeps' index of all chats."""
    return f"{settings.WMS_REDIS_PREFIX}:chats:activity"


# --- Finding keys (the orphan sweep) ------------------------------------------------------------
# SCAN patterns, and the ids read back from the key names SCAN returns. Only names of the forms
# built above parse; anything else under the prefix is left alone.


def every_chat_pattern() -> str:
    """SCAN MATCH pattern of every key of every chat."""
    return glob_escape(f"{settings.WMS_REDIS_PREFIX}:{{chat:") + "*"


def every_user_pattern() -> str:
    """SCAN MATCH pattern of every per-user chat key (chat lists, contacts)."""
    return glob_escape(f"{settings.WMS_REDIS_PREFIX}:{{user:") + "*"


_CHAT_KEY = re.compile(r"\{chat:([^{}]+)\}:(meta|members|joined|msgs|seq)")
_USER_KEY = re.compile(r"\{user:([1-9][0-9]{0,18})\}:(chats|contacts)")


def chat_id_of(key: str) -> str | None:
    """The chat id of one of its keys (as built by chat_keys()), else None."""
    found = match_after_prefix(_CHAT_KEY, key)
    return found[1] if found and is_chat_id(found[1]) else None


def user_id_of(key: str) -> int | None:
    """The user id of a per-user chat key (chat list, contacts), else None."""
    found = match_after_prefix(_USER_KEY, key)
    return int(found[1]) if found else None
