"""Reads of the quiet floor: the planned silences as this process holds them (directory/
holdings.py: a silence saved or deleted in any process moves the directory's version, and the
publish script refuses a publish resolved from an older one, so the next try sees it), and the
silences and mutes the API lists."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from config import timestamps
from config.users import User
from directory import cache as directory_cache
from directory import holdings
from notifications.domain import Severity
from notifications.readmodel import quiet as quiet_store
from subscriptions.models import Subscription

from .models import Silence


@dataclass(frozen=True)
class HeldSilence:
    id: int
    type_codes: frozenset[str]  # empty: every type
    starts_ms: int
    ends_ms: int
    include_critical: bool

    def covers(self, *, type_code: str, severity: str, at_ms: int) -> bool:
        """The one rule of what a silence holds back."""
        return (
            self.starts_ms <= at_ms < self.ends_ms
            and (not self.type_codes or type_code in self.type_codes)
            and (self.include_critical or Severity(severity) != Severity.CRITICAL)
        )


def _ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


def _load() -> dict[int, tuple[HeldSilence, ...]]:
    """Every silence not yet ended when loaded, by warehouse (ended ones cover nothing)."""
    found: dict[int, list[HeldSilence]] = {}
    rows = Silence.objects.filter(ends_at__gt=timestamps.now()).prefetch_related("message_types")
    for silence in rows:
        found.setdefault(silence.warehouse_id, []).append(
            HeldSilence(
                id=silence.pk,
                type_codes=frozenset(t.code for t in silence.message_types.all()),
                starts_ms=_ms(silence.starts_at),
                ends_ms=_ms(silence.ends_at),
                include_critical=silence.include_critical,
            )
        )
    return {warehouse: tuple(held) for warehouse, held in found.items()}


SILENCES = holdings.declare(
    "quiet.silences",
    models=("quiet.Silence", "quiet.Silence_message_types", "subscriptions.MessageType"),
    load=_load,
)


class HeldSilences:
    """notifications.hooks.silences: the silence covering an alert, from what is held."""

    def covering(
        self, *, warehouse_id: int, type_code: str, severity: str, at_ms: int
    ) -> int | None:
        for held in SILENCES.get().get(warehouse_id, ()):
            if held.covers(type_code=type_code, severity=severity, at_ms=at_ms):
                return held.id
        return None


def is_member(*, user: User, warehouse_id: int) -> bool:
    """Staff, or a user who (or one of whose roles) subscribes to something in the warehouse."""
    if user.is_staff:
        return True
    subscriptions = Subscription.objects.filter(warehouse_id=warehouse_id)
    return (
        subscriptions.filter(user_id=user.pk).exists()
        or subscriptions.filter(role_id__in=directory_cache.role_ids(user)).exists()
    )


def current_and_future(*, warehouse_id: int) -> list[Silence]:
    """The warehouse's silences not yet ended, soonest first."""
    return list(
        Silence.objects.filter(warehouse_id=warehouse_id, ends_at__gt=timestamps.now())
        .select_related("created_by")
        .prefetch_related("message_types")
    )


def mute_of(*, user: User, warehouse_id: int) -> quiet_store.Mute | None:
    return quiet_store.mute_of(
        warehouse_id=warehouse_id, user_id=user.pk, now_ms=timestamps.now_ms()
    )
