"""The Python rule API: `Alert`, the `Rule` base class, and the registry `@register` adds to."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from django.conf import settings

from notifications.domain import ALERT_KEY_MAX_LENGTH

if TYPE_CHECKING:
    from subscriptions.models import Warehouse

# Rule names end up in Redis keys and on the command line: keep them plain.
RULE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,99}$")
SEVERITIES = ("info", "warning", "critical")


@dataclass(frozen=True)
class Alert:
    """One notification a rule wants sent.

    `key` names the condition (e.g. the bin code): while a rule keeps yielding the same key in
    the same warehouse, the notification is not sent again (until the cool-down has passed,
    when the same notification is raised again if it is still open); once a run no longer
    yields it, the condition has cleared: its notification is resolved by the system, and its
    return is sent again. Without a key, the title is the key.
    """

    warehouse: int | Warehouse
    title: str
    body: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    ttl_seconds: int | None = None
    #: "info", "warning" or "critical"; None: the message type's default_severity.
    severity: str | None = None

    def __post_init__(self) -> None:
        if self.severity is not None and self.severity not in SEVERITIES:
            raise ValueError(f"An alert's severity is one of {', '.join(SEVERITIES)} (or None).")
        # Frozen: the defaults are filled in through object.__setattr__.
        if not self.key:
            object.__setattr__(self, "key", self.title)
        if len(self.key) > ALERT_KEY_MAX_LENGTH:
            raise ValueError(f"An alert key is at most {ALERT_KEY_MAX_LENGTH} characters.")
        if self.data is None:
            object.__setattr__(self, "data", {})

    @property
    def warehouse_id(self) -> int:
        return self.warehouse if isinstance(self.warehouse, int) else self.warehouse.pk


class Rule:
    """Base class of Python rules. Subclass it, set the class attributes, yield alerts.

    Example (see inventory/rules.py for the shipped one)::

        from rules import Alert, Rule, register

        @register
        class NegativeBinStock(Rule):
            name = "negative_bin_stock"
            message_type = "REP_NOTICE"
            interval_seconds = 30

            def alerts(self):
                for bin in Bin.objects.filter(stock__lt=0):
                    yield Alert(warehouse=bin.warehouse_id, title=f"Replenish {bin.code}",
                                body=f"Stock is {bin.stock}", data={"bin": bin.code},
                                key=bin.code)

    `alerts()` only reads: the runner de-duplicates and publishes what it yields. An exception
    fails this run of this rule only (it is logged); other rules still run.
    """

    #: Unique, lower case: letters, digits, `_`, `.`, `-` (used in Redis keys and `--rule`).
    name: ClassVar[str]
    #: Code of the MessageType the alerts are published as, e.g. "REP_NOTICE".
    message_type: ClassVar[str]
    #: Run at most this often.
    interval_seconds: ClassVar[int] = 60
    #: Seconds before a condition that persists is notified again; None: the
    #: RULES_DEDUP_COOLDOWN_SECONDS setting. 0 sends on every run.
    cooldown_seconds: ClassVar[int | None] = None
    #: One line for people reading `run_rules` output and logs.
    description: ClassVar[str] = ""

    def alerts(self) -> Iterable[Alert]:
        """The alerts that hold right now (every one, every run: absence means "cleared")."""
        raise NotImplementedError

    @classmethod
    def effective_cooldown(cls) -> int:
        if cls.cooldown_seconds is None:
            return int(settings.RULES_DEDUP_COOLDOWN_SECONDS)
        return int(cls.cooldown_seconds)

    @classmethod
    def is_enabled(cls) -> bool:
        """False when listed in the RULES_DISABLED setting (how a site switches one off)."""
        return cls.name not in settings.RULES_DISABLED


R = TypeVar("R", bound=type[Rule])


class RuleRegistry:
    """The Python rules by name. Apps' `rules` modules are imported on first use."""

    def __init__(self, *, discover: bool = True) -> None:
        """`discover=False`: only rules registered by hand (tests build such registries)."""
        self._rules: dict[str, type[Rule]] = {}
        self._discovered = not discover
        self._lock = threading.Lock()

    def register(self, rule: R) -> R:
        """Add a rule class (usable as a class decorator); checks its attributes."""
        name = getattr(rule, "name", None)
        if not isinstance(name, str) or not RULE_NAME.match(name):
            raise ValueError(f"{rule.__qualname__}.name must match {RULE_NAME.pattern}.")
        if not isinstance(getattr(rule, "message_type", None), str):
            raise ValueError(f"{rule.__qualname__}.message_type must be a message type code.")
        if not isinstance(rule.interval_seconds, int) or rule.interval_seconds < 1:
            raise ValueError(f"{rule.__qualname__}.interval_seconds must be a positive integer.")
        if rule.cooldown_seconds is not None and rule.cooldown_seconds < 0:
            raise ValueError(f"{rule.__qualname__}.cooldown_seconds must not be negative.")
        existing = self._rules.get(name)
        if existing is not None and _path(existing) != _path(rule):
            raise ValueError(f"Two rules are named {name!r}: {_path(existing)} and {_path(rule)}.")
        self._rules[name] = rule
        return rule

    def unregister(self, name: str) -> None:
        self._rules.pop(name, None)

    def get(self, name: str) -> type[Rule] | None:
        self.discover()
        return self._rules.get(name)

    def all(self) -> list[type[Rule]]:
        self.discover()
        return [self._rules[name] for name in sorted(self._rules)]

    def __iter__(self) -> Iterator[type[Rule]]:
        return iter(self.all())

    def discover(self) -> None:
        """Import `<app>.rules` of every installed app once, so their @register calls run."""
        if self._discovered:
            return
        with self._lock:
            if not self._discovered:
                from django.utils.module_loading import autodiscover_modules

                autodiscover_modules("rules")
                self._discovered = True


def _path(rule: type[Rule]) -> str:
    return f"{rule.__module__}.{rule.__qualname__}"


registry = RuleRegistry()
register = registry.register
