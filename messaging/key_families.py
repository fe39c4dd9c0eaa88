# ruff: noqa: E501  (each row is the docs' key table's row, read best whole)
"""The Redis key families of chat, in the one registry (config/keyfamilies.py
finds this module in every installed app). Their names are built in messaging/keys.py."""

from __future__ import annotations

from config.keyfamilies import Field, KeyFamily

FAMILIES: tuple[KeyFamily, ...] = (
    KeyFamily(
        "wms:{chat:<chat id>}:meta",
        "hash",
        "kind, creator, created_ms, last_ms (activity), mver (membership version), last (newest message JSON, for previews)",
        "messaging/lua/*.lua",
        fields=(
            Field("kind", "`direct` or `group`"),
            Field("creator", "who made it"),
            Field("created_ms", "when"),
            Field("last_ms", "its last activity (ms)"),
            Field("mver", "its membership version"),
            Field("last", "its newest message's JSON"),
        ),
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:members",
        "sorted set",
        "member user id → id of the last message they have seen",
        "messaging/lua/*.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:joined",
        "hash",
        "member user id → last message id when they joined (they see only later ones)",
        "messaging/lua/*.lua",
        fields=(Field("<user id>", "last message id when they joined"),),
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:msgs",
        "sorted set",
        "message JSON scored by message id",
        "messaging/lua/send.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:seq",
        "string",
        "the last message id given out in the chat; a direct chat's outlives the chat (its pair may open it again and ids never go back) until one of the pair is deleted",
        "messaging/lua/send.lua",
    ),
    KeyFamily(
        "wms:{chat:<chat id>}:idem:u:<user id>:<key hash>",
        "string",
        "Idempotency-Key record of a chat send, for `IDEMPOTENCY_TTL_SECONDS`",
        "messaging/lua/send.lua (with config/lua/idempotency.lua)",
    ),
    KeyFamily(
        "wms:{user:<user id>}:chats",
        "sorted set",
        "chat ids the user belongs to, scored by membership version (an index written before and after joining; the chat's `members` decides)",
        "messaging/store.py",
    ),
    KeyFamily(
        "wms:{user:<user id>}:contacts",
        "list",
        "recent contacts' user ids, most recent first, capped at 100",
        "messaging/store.py",
    ),
    KeyFamily(
        "wms:chats:activity",
        "sorted set",
        "chat id → last activity in ms (the retention sweeps' index)",
        "messaging/lua/*.lua",
    ),
)
