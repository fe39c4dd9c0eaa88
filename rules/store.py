"""The only rules code that talks to Redis: de-duplication marks, run locks, last runs."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from django.conf import settings

from config.redis import Batch, LuaScript, as_text, get_redis

from . import keys

_dedup = LuaScript.beside(__file__, "dedup")
_release_lock = LuaScript.beside(__file__, "release_lock")


def claim_due(
    rule_id: str,
    *,
    now_ms: int,
    cooldown_seconds: int,
    abandoned_seconds: int,
    keys_by_warehouse: Mapping[int, Sequence[str]],
) -> dict[int, set[str]]:
    """Of this run's alert keys per warehouse, those to send now, claimed (see lua/dedup.lua).

    Every warehouse in `keys_by_warehouse` is reconciled, an empty list meaning "all clear"
    there. One script call per warehouse (each touches one hash slot), in one round trip.
    """
    warehouse_ids = list(keys_by_warehouse)
    if not warehouse_ids:
        return {}
    batch = Batch()
    for warehouse_id in warehouse_ids:
        batch.script(
            _dedup,
            keys=[keys.rule_sent(warehouse_id, rule_id)],
            args=[
                now_ms,
                cooldown_seconds * 1000,
                abandoned_seconds * 1000,
                *keys_by_warehouse[warehouse_id],
            ],
        )
    replies = batch.execute()
    return {
        warehouse_id: {as_text(k) for k in reply}
        for warehouse_id, reply in zip(warehouse_ids, replies, strict=True)
    }


def confirm_sent(
    rule_id: str,
    warehouse_id: int,
    alert_keys: Sequence[str],
    *,
    now_ms: int,
    cooldown_seconds: int,
) -> None:
    """Turn the claims of keys that were published into marks (sent at `now_ms`)."""
    if not alert_keys or cooldown_seconds <= 0:
        return
    key = keys.rule_sent(warehouse_id, rule_id)
    pipe = get_redis().pipeline(transaction=True)
    pipe.hset(key, mapping=dict.fromkeys(alert_keys, now_ms))
    # The hash may have expired since the claim: never leave one without a time to live.
    pipe.pexpire(key, cooldown_seconds * 1000)
    pipe.execute()


def unclaim(rule_id: str, warehouse_id: int, alert_keys: Sequence[str]) -> None:
    """Drop the claims of keys whose publishing failed, so the next run tries them again."""
    if alert_keys:
        get_redis().hdel(keys.rule_sent(warehouse_id, rule_id), *alert_keys)


def marks(rule_id: str, warehouse_id: int, alert_keys: Sequence[str]) -> dict[str, int]:
    """The marks of these keys (ms sent, negative while claimed); read only, for dry runs."""
    if not alert_keys:
        return {}
    values = get_redis().hmget(keys.rule_sent(warehouse_id, rule_id), list(alert_keys))
    return {key: int(value) for key, value in zip(alert_keys, values, strict=True) if value}


# --- The notification raised for each alert key (the alert lifecycle) --------------------------


def alert_notification(rule_id: str, warehouse_id: int, alert_key: str) -> str | None:
    """Id of the notification last raised for this key (it may since be resolved or gone)."""
    value = get_redis().hget(keys.rule_alerts(warehouse_id, rule_id), alert_key)
    return None if value is None else as_text(value)


def remember_alert(rule_id: str, warehouse_id: int, alert_key: str, notification_id: str) -> None:
    key = keys.rule_alerts(warehouse_id, rule_id)
    batch = Batch()
    batch.command("HSET", key, alert_key, notification_id)
    # A rule deleted while its alerts stood leaves nothing behind longer than a notification.
    batch.command("EXPIRE", key, int(settings.NOTIFICATION_MAX_TTL_SECONDS))
    batch.execute()


def alert_notifications(rule_id: str, warehouse_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """Alert key -> notification id per warehouse, in one pipelined round trip."""
    if not warehouse_ids:
        return {}
    batch = Batch()
    for warehouse_id in warehouse_ids:
        batch.command("HGETALL", keys.rule_alerts(warehouse_id, rule_id))
    return {
        warehouse_id: _pairs(flat)
        for warehouse_id, flat in zip(warehouse_ids, batch.execute(), strict=True)
    }


def _pairs(reply: dict | list) -> dict[str, str]:
    """HGETALL's reply as text: a dict from redis-py's parser, a flat list from a raw pipeline."""
    items = reply.items() if isinstance(reply, dict) else zip(reply[0::2], reply[1::2], strict=True)
    return {as_text(k): as_text(v) for k, v in items}


def forget_alerts(rule_id: str, warehouse_id: int, alert_keys: Sequence[str]) -> None:
    if alert_keys:
        get_redis().hdel(keys.rule_alerts(warehouse_id, rule_id), *alert_keys)


def acquire_lock(rule_id: str, *, ttl_seconds: int) -> str | None:
    """A token if this caller may run the rule now, None if another run holds it (SET NX EX)."""
    token = uuid.uuid4().hex
    if get_redis().set(keys.rule_lock(rule_id), token, nx=True, ex=ttl_seconds):
        return token
    return None


def release_lock(rule_id: str, token: str) -> None:
    _release_lock(keys=[keys.rule_lock(rule_id)], args=[token])


def last_runs(rule_ids: Sequence[str]) -> dict[str, int]:
    """Start of each Python rule's last run, ms since the epoch (absent: never ran)."""
    if not rule_ids:
        return {}
    values = get_redis().hmget(keys.rule_last_runs(), list(rule_ids))
    return {rule_id: int(v) for rule_id, v in zip(rule_ids, values, strict=True) if v}


def set_last_run(rule_id: str, started_ms: int) -> None:
    get_redis().hset(keys.rule_last_runs(), rule_id, started_ms)


def scan_last_runs(*, cursor: int, count: int) -> tuple[int, list[str]]:
    """A page of the rule ids having a last run (HSCAN: each call bounded)."""
    next_cursor, found = get_redis().hscan(keys.rule_last_runs(), cursor=cursor, count=count)
    return int(next_cursor), [as_text(rule_id) for rule_id in found]


def forget_last_runs(rule_ids: Sequence[str]) -> int:
    """Drop the last runs of these rules (ones that no longer exist); returns how many."""
    return int(get_redis().hdel(keys.rule_last_runs(), *rule_ids)) if rule_ids else 0
