"""Redis key names of the subscription mirror, and the warehouse hash tag of all warehouse keys.

Every key about one warehouse carries the hash tag `{wh:<id>}`, so on Redis Cluster they all
live in one slot and a Lua script or MULTI may touch several of them. Stored keys outlive
deploys: tests/subscriptions/test_keys.py pins these exact strings.
"""

from __future__ import annotations

from django.conf import settings


class WarehouseId(int):
    """A warehouse id that carries its prefix, made once, for code that names many of its keys
    at once (a read-model script's 23): every key function takes it as the id it is."""

    prefix: str

    @classmethod
    def of(cls, warehouse_id: int) -> WarehouseId:
        made = cls(warehouse_id)
        made.prefix = warehouse_prefix(int(warehouse_id))
        return made


def warehouse_prefix(warehouse_id: int) -> str:
    """`wms:{wh:<id>}`: the start of every key that belongs to one warehouse."""
    if type(warehouse_id) is WarehouseId:
        return warehouse_id.prefix
    return f"{settings.WMS_REDIS_PREFIX}:{{wh:{int(warehouse_id)}}}"


def subscribers(warehouse_id: int, message_type_id: int) -> str:
    """Set of subscriber ids (`u:<user id>`, `r:<group id>`) of a message type in a warehouse."""
    return f"{warehouse_prefix(warehouse_id)}:subs:{int(message_type_id)}"


def subscribers_token(warehouse_id: int, message_type_id: int) -> str:
    """`<member count>:<random hex>`, rewritten with every write of the set above.

    It is also the pair's mark of being mirrored: every write sets it, an empty set included,
    so a missing token means Redis lost the pair (emptied, restarted empty, key evicted) and
    the count tells a set that lost members. Publishers cache a set's members with its token
    and check the token atomically in their fan-out script, so a publish is one round trip.
    """
    return f"{subscribers(warehouse_id, message_type_id)}:token"


def subscribers_version(warehouse_id: int, message_type_id: int) -> str:
    """Counter a writer increments before reading the database; a write lands only while the
    counter still holds its number, so an older read never overwrites a newer one."""
    return f"{subscribers(warehouse_id, message_type_id)}:ver"


def mirror_rebuilding() -> str:
    """String, while some process rebuilds subscriber sets from the database (what, since
    when); it expires by itself if that process dies. /healthz reports it."""
    return f"{settings.WMS_REDIS_PREFIX}:mirror:rebuilding"
