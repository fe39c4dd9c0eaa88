"""The one registry of key families (config/keyfamilies.py): every key an app builds is of
exactly one family, and every family is built somewhere. (The docs' key table is checked by
tests/docs/test_key_table.py.)

The builders are not listed by hand: every function of every app's `keys` module that returns
a `str` is called with sample arguments chosen by its parameters' names (every sample of each,
so both kinds of inbox, both scopes and both metrics are built), and so is the core's. A new
builder is checked the day it is written; one with a parameter of a new name fails below until
it has samples; a name-building function that makes no key (a pattern, a channel, a prefix) is
named in NOT_KEYS."""

from __future__ import annotations

import importlib
import inspect
import itertools
from collections.abc import Callable, Iterator

from django.apps import apps
from django.conf import settings

from config import beat, keyfamilies, queues
from messaging import keys as chat_keys
from notifications import keys
from rules import keys as rule_keys

# Sample values of each parameter name a key builder takes.
SAMPLES: dict[str, tuple[object, ...]] = {
    "warehouse_id": (7,),
    "message_type_id": (3,),
    "user_id": (31,),
    "subscriber": ("u:31", "r:42"),
    "scope": ("u:31", "python"),
    "key": ("retry-1",),
    "day": (20_000,),
    "metric": ("claim", "resolve"),
    "type_code": ("REP_NOTICE",),
    "rule_id": ("sql:5", "py:negative_stock"),
    "chat_id": (chat_keys.direct_chat_id(31, 42), "g-0123456789abcdef"),
    "session_key": ("0123456789abcdefghijklmnopqrstuv",),
    "task_name": ("notifications.expire",),
    "queue": ("outbox",),
}

# Functions of the keys modules that return a name which is not a key: SCAN and PSUBSCRIBE
# patterns, pub/sub channels, the prefixes keys are built on, ids, and push's VAPID keys.
NOT_KEYS = {
    "messaging.keys": {
        "direct_chat_id",
        "chat_prefix",
        "events_channel",
        "events_channel_pattern",
        "user_prefix",
        "every_chat_pattern",
        "every_user_pattern",
    },
    "notifications.keys": {
        "events_channel_pattern",
        "every_warehouse_pattern",
        "warehouse_pattern",
    },
    "subscriptions.keys": {"warehouse_prefix"},
    "push.keys": {"b64url"},  # push.keys holds the VAPID key pair, not Redis keys
}

# The core's own key builders (config/ has no keys module).
CORE_BUILDERS: tuple[Callable[..., str], ...] = (beat.tick_key, queues.consumer_key)


def key_builders() -> Iterator[Callable[..., str]]:
    """Every function returning `str` of every installed app's `keys` module (bar NOT_KEYS),
    then the core's."""
    for config in apps.get_app_configs():
        try:
            module = importlib.import_module(f"{config.name}.keys")
        except ModuleNotFoundError:
            continue
        skipped = NOT_KEYS.get(module.__name__, set())
        for name, function in vars(module).items():
            if (
                inspect.isfunction(function)
                and function.__module__ == module.__name__
                and not name.startswith("_")
                and name not in skipped
                and inspect.signature(function).return_annotation in ("str", str)
            ):
                yield function
    yield from CORE_BUILDERS


def built_keys() -> list[str]:
    """A key of every key builder, with every combination of its parameters' samples."""
    found = []
    for builder in key_builders():
        names = list(inspect.signature(builder).parameters)
        missing = [name for name in names if name not in SAMPLES]
        assert not missing, f"{builder.__module__}.{builder.__name__}: no SAMPLES for {missing}"
        for values in itertools.product(*(SAMPLES[name] for name in names)):
            found.append(builder(**dict(zip(names, values, strict=True))))
    return found


def test_the_builders_are_found_not_listed():
    """The discovery finds what the hand list used to name (and more as apps add them)."""
    names = {f"{b.__module__}.{b.__name__}" for b in key_builders()}
    assert {
        "notifications.keys.inbox",
        "rules.keys.rule_lock",
        "messaging.keys.idempotency",
        "subscriptions.keys.mirror_rebuilding",
        "directory.keys.session",
        "delivery.keys.checked",
        "config.beat.tick_key",
    } <= names
    assert len(built_keys()) >= 52


def test_every_key_built_is_of_exactly_one_family():
    for key in built_keys():
        matching = [
            f for f in keyfamilies.families() if f.regex(settings.WMS_REDIS_PREFIX).fullmatch(key)
        ]
        assert len(matching) == 1, (key, matching)


def test_every_family_is_built_somewhere():
    built = {keyfamilies.parse(key).family for key in built_keys()}  # type: ignore[union-attr]
    assert set(keyfamilies.families()) - built == set()


def test_owners_come_out_of_the_key():
    parsed = keyfamilies.parse(rule_keys.rule_alerts(7, "sql:5"))
    assert parsed is not None
    assert (parsed.warehouse_id, parsed.family.owner, parsed.owner) == (7, "rule", "sql:5")
    assert keys.parse_warehouse_key(keys.inbox(7, "r:42")) == keys.WarehouseKey(7, "role", "42")
    assert keys.parse_warehouse_key(keys.inbox(7, "u:31")) == keys.WarehouseKey(7, "user", "31")
    assert keys.parse_warehouse_key(keys.contents(7)) == keys.WarehouseKey(7, "other")
