"""Helpers for walking the Redis keyspace (orphan sweeps, events channels); key names stay in
the apps' keys.py."""

from __future__ import annotations

import re

from django.conf import settings


def glob_escape(text: str) -> str:
    """`text` as a literal inside a SCAN MATCH pattern (Redis glob: * ? [ ] and \\ escape)."""
    return "".join("\\" + c if c in "*?[]\\{}" else c for c in text)


def match_after_prefix(pattern: re.Pattern[str], key: str) -> re.Match[str] | None:
    """`pattern` matched in full against what follows `<WMS_REDIS_PREFIX>:` in a key name; None
    for a key outside the prefix or of another form."""
    head = f"{settings.WMS_REDIS_PREFIX}:"
    return pattern.fullmatch(key[len(head) :]) if key.startswith(head) else None


def events_channel_tag(channel: str, family: str) -> str | None:
    """The id in the hash tag of an events channel, `<WMS_REDIS_PREFIX>:{<family>:<id>}:events`,
    unchecked (the caller knows its form); None for any other name."""
    head = f"{settings.WMS_REDIS_PREFIX}:{{{family}:"
    if not (channel.startswith(head) and channel.endswith("}:events")):
        return None
    return channel[len(head) : -len("}:events")]
