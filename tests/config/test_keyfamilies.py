"""The one registry of key families (config/keyfamilies.py): every key an app builds is of
exactly one family, and every family is built somewhere. (The docs' key table is checked by
tests/docs/test_key_table.py.)"""

from __future__ import annotations

from django.conf import settings

from config import beat, keyfamilies, queues
from delivery import keys as delivery_keys
from directory import keys as directory_keys
from messaging import keys as chat_keys
from notifications import keys
from subscriptions import keys as subscription_keys


def built_keys() -> list[str]:
    """A key of every name-building function of every app."""
    w, user, role, chat = 7, 31, 42, chat_keys.direct_chat_id(31, 42)
    return [
        subscription_keys.subscribers(w, 3),
        subscription_keys.subscribers_token(w, 3),
        subscription_keys.subscribers_version(w, 3),
        keys.sequence(w),
        keys.inbox(w, f"u:{user}"),
        keys.inbox(w, f"r:{role}"),
        keys.contents(w),
        keys.ids(w),
        keys.routes(w),
        keys.expiry(w),
        keys.idempotency(w, f"u:{user}", "retry-1"),
        keys.idempotency(w, "python", "retry-2"),
        keys.idempotency_binding(f"u:{user}", "retry-1"),
        keys.idempotency_binding("python", "retry-2"),
        keys.flags(w),
        keys.states(w),
        keys.changes(w),
        keys.history(w),
        keys.escalations(w),
        keys.reminders(w),
        keys.report_counts(w, 20_000),
        keys.report_durations(w, 20_000, "claim"),
        keys.report_durations(w, 20_000, "resolve"),
        keys.report_alert_keys(w, 20_000, "REP_NOTICE"),
        keys.flaps(w),
        keys.claims(w),
        keys.classes(w),
        keys.places(w),
        keys.open_index(w),
        keys.users(w),
        keys.reads(w),
        keys.snoozes(w),
        keys.rule_alerts(w, "sql:5"),
        keys.rule_sent(w, "py:negative_stock"),
        keys.rule_lock("sql:5"),
        keys.rule_last_runs(),
        chat_keys.meta(chat),
        chat_keys.members(chat),
        chat_keys.joined(chat),
        chat_keys.messages(chat),
        chat_keys.sequence(chat),
        chat_keys.idempotency(chat, user, "retry-1"),
        chat_keys.user_chats(user),
        chat_keys.contacts(user),
        chat_keys.activity(),
        beat.tick_key("notifications.expire"),
        queues.consumer_key("outbox"),
        subscription_keys.mirror_rebuilding(),
        directory_keys.version_key(),
        directory_keys.session("0123456789abcdefghijklmnopqrstuv"),
        delivery_keys.sent(w),
        delivery_keys.arrived(w),
        delivery_keys.stream_servers(),
        delivery_keys.checked(),
    ]


def test_every_key_built_is_of_exactly_one_family():
    for key in built_keys():
        matching = [
            f for f in keyfamilies.FAMILIES if f.regex(settings.WMS_REDIS_PREFIX).fullmatch(key)
        ]
        assert len(matching) == 1, (key, matching)


def test_every_family_is_built_somewhere():
    built = {keyfamilies.parse(key).family for key in built_keys()}  # type: ignore[union-attr]
    assert set(keyfamilies.FAMILIES) - built == set()


def test_owners_come_out_of_the_key():
    parsed = keyfamilies.parse(keys.rule_alerts(7, "sql:5"))
    assert parsed is not None
    assert (parsed.warehouse_id, parsed.family.owner, parsed.owner) == (7, "rule", "sql:5")
    assert keys.parse_warehouse_key(keys.inbox(7, "r:42")) == keys.WarehouseKey(7, "role", "42")
    assert keys.parse_warehouse_key(keys.inbox(7, "u:31")) == keys.WarehouseKey(7, "user", "31")
    assert keys.parse_warehouse_key(keys.contents(7)) == keys.WarehouseKey(7, "other")
