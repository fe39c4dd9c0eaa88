"""Input validation and output shapes of the notifications API (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.fields import BoundedListField
from config.timestamps import iso_ms
from config.validation import validated
from directory import cache as directory
from subscriptions.models import Warehouse

from .. import hooks
from ..domain import (
    Actor,
    Event,
    HistoryEntry,
    InboxItem,
    InboxPage,
    Notification,
    ReadOnlyDict,
    Severity,
    Status,
    UnreadSummary,
)

# Cursors are integers below 2**53 (see lua/publish.lua).
MAX_CURSOR = 2**53


class WarehouseField(serializers.PrimaryKeyRelatedField):
    default_error_messages = {
        "does_not_exist": _("Unknown or inactive warehouse {pk_value}."),
        "incorrect_type": _("The warehouse must be a warehouse id (an integer)."),
        "required": _("The warehouse parameter (a warehouse id) is required."),
    }

    def __init__(self, **kwargs) -> None:
        super().__init__(queryset=Warehouse.objects.filter(is_active=True), **kwargs)

    def to_internal_value(self, data: object) -> Warehouse:
        # The active warehouses come from directory.cache's per-process cache (exact: every
        # warehouse change invalidates it), so a poll does not query the database for it.
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("incorrect_type", data_type=type(data).__name__)
        try:
            pk = int(data)
        except (TypeError, ValueError):
            self.fail("incorrect_type", data_type=type(data).__name__)
        found = directory.active_warehouse(pk) if 0 < pk < 2**63 else None
        if found is None:
            self.fail("does_not_exist", pk_value=data)
        return found


class WarehouseQuery(serializers.Serializer):
    warehouse = WarehouseField()


def _plain_number(raw: object, low: int, high: int) -> int | None:
    """A query value of plain ASCII digits within [low, high]; None for anything else (the
    fields then say what is wrong with it)."""
    if isinstance(raw, str) and 0 < len(raw) < 20 and raw.isascii() and raw.isdigit():
        value = int(raw)
        if low <= value <= high:
            return value
    return None


def _plain_warehouse_id(params: Mapping[str, Any]) -> int | None:
    """The `warehouse` parameter when it is the plain id of an active warehouse, else None."""
    pk = _plain_number(params.get("warehouse"), 1, 2**63 - 1)
    return pk if pk is not None and directory.is_active_warehouse(pk) else None


def warehouse_from_query(params: Mapping[str, Any]) -> Warehouse:
    """The `warehouse` query parameter as `WarehouseQuery` validates it. A plain id of an
    active warehouse is taken as it is (a poll's hot path); anything else goes through the
    fields (config/validation.py), for the same errors."""
    pk = _plain_number(params.get("warehouse"), 1, 2**63 - 1)
    found = directory.active_warehouse(pk) if pk is not None else None
    if found is None:
        found = validated(WarehouseQuery, params)["warehouse"]
    return found


# Read once, as the fields below are made once: inbox_query's plain path uses the same bounds.
PAGE_MAX = settings.NOTIFICATION_PAGE_MAX
PAGE_DEFAULT = settings.NOTIFICATION_PAGE_DEFAULT


class InboxQuery(WarehouseQuery):
    since = serializers.IntegerField(
        min_value=0,
        max_value=MAX_CURSOR,
        required=False,
        help_text="The `next_since` of the previous poll.",
    )
    limit = serializers.IntegerField(min_value=1, max_value=PAGE_MAX, default=PAGE_DEFAULT)
    include_read = serializers.BooleanField(default=False)


_PLAIN_FLAGS = {"true": True, "false": False, "1": True, "0": False}


@dataclass(frozen=True, slots=True)
class PollQuery:
    """A poll's query, parsed once (`inbox_query`, `unread_query`): what the selector is asked
    and what the answer's ETag hashes (api/etags.py)."""

    warehouse_id: int  # an active warehouse's (the poll's hot path makes no instance of it)
    since: int | None = None  # None: the look-back (selectors.lookback_since)
    limit: int = PAGE_DEFAULT
    include_read: bool = False

    def validated_data(self) -> dict[str, Any]:
        """As `InboxQuery(data=...).validated_data` gives it (no `since` when none was sent)."""
        found: dict[str, Any] = {
            "warehouse": directory.warehouse(self.warehouse_id),
            "limit": self.limit,
            "include_read": self.include_read,
        }
        if self.since is not None:
            found["since"] = self.since
        return found


def inbox_query(params: Mapping[str, Any]) -> PollQuery:
    """`InboxQuery`'s validated data. A query of plain values (ids and numbers in range,
    `true`/`false`/`1`/`0`) is read as it is, the poll's hot path; anything else goes through
    the fields, for the same values and errors (tests/config/test_query_params.py compares)."""
    warehouse = _plain_warehouse_id(params)
    limit_raw = params.get("limit")
    limit = PAGE_DEFAULT if limit_raw is None else _plain_number(limit_raw, 1, PAGE_MAX)
    flag = params.get("include_read")
    include_read = False if flag is None else _PLAIN_FLAGS.get(flag)
    since_raw = params.get("since")
    since = None if since_raw is None else _plain_number(since_raw, 0, MAX_CURSOR)
    if (
        warehouse is None
        or limit is None
        or include_read is None
        or (since_raw is not None and since is None)
    ):
        found = validated(InboxQuery, params)
        return PollQuery(
            warehouse_id=found["warehouse"].pk,
            since=found.get("since"),
            limit=found["limit"],
            include_read=found["include_read"],
        )
    return PollQuery(warehouse_id=warehouse, since=since, limit=limit, include_read=include_read)


def unread_query(params: Mapping[str, Any]) -> PollQuery:
    """The unread summary's query (its warehouse alone), as `WarehouseQuery` validates it."""
    found = _plain_warehouse_id(params)
    if found is None:
        found = validated(WarehouseQuery, params)["warehouse"].pk
    return PollQuery(warehouse_id=found)


class MarkReadInput(WarehouseQuery):
    ids = BoundedListField(
        child=serializers.UUIDField(),
        required=False,
        max_length=settings.NOTIFICATION_MARK_READ_MAX_IDS,
    )
    all = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs: dict) -> dict:
        if attrs.get("all") == bool(attrs.get("ids")):
            raise serializers.ValidationError(
                _('Send either "ids" (a non-empty list) or "all": true.')
            )
        return attrs


class PublishInput(serializers.Serializer):
    # Lengths and limits are checked by services.publish, the one place that owns them.
    message_type = serializers.CharField(max_length=64)
    warehouse = serializers.IntegerField(min_value=1)
    title = serializers.CharField()
    body = serializers.CharField(
        allow_blank=True, required=False, default="", trim_whitespace=False
    )
    # The API's field is named `data`, like Serializer.data (the output): DRF takes declared
    # fields from the class, so the two never meet, but the stubs see a clash.
    data = serializers.JSONField(required=False, default=dict)  # type: ignore[assignment]
    ttl_seconds = serializers.IntegerField(required=False, allow_null=True, default=None)
    severity = serializers.ChoiceField(
        choices=[s.value for s in Severity],
        required=False,
        allow_null=True,
        default=None,
        help_text="Default: the message type's default_severity.",
    )
    key = serializers.CharField(
        required=False, allow_null=True, default=None, help_text="The alert key, if any."
    )


class ActorOutput(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class ActionOutput(serializers.Serializer):
    code = serializers.CharField()
    # `label` is also a Serializer's own attribute (DRF takes declared fields from the class).
    label = serializers.CharField(help_text="In the request's language.")  # type: ignore[assignment]
    confirm_field = serializers.CharField(
        allow_null=True,
        help_text="A key of `data` whose value must be scanned (sent as `scan`) to run it.",
    )
    confirm_label = serializers.CharField(
        allow_null=True,
        help_text="What to scan, in words (e.g. Scan the bin), in the request's language; "
        "null without confirm_field.",
    )
    available = serializers.BooleanField(
        help_text="False when this alert's data lacks the confirm_field: it cannot run here."
    )
    reason = serializers.CharField(
        allow_null=True, help_text="Why it is not available, in words; null when it is."
    )


class NotificationOutput(serializers.Serializer):
    id = serializers.CharField(source="notification.id")
    message_type = serializers.CharField(source="notification.message_type")
    warehouse = serializers.IntegerField(source="notification.warehouse")
    title = serializers.CharField(source="notification.title")
    body = serializers.CharField(source="notification.body")
    data = serializers.JSONField(source="notification.data")  # type: ignore[assignment]
    created_at = serializers.SerializerMethodField()
    expires_at = serializers.SerializerMethodField()
    read = serializers.BooleanField()
    cursor = serializers.IntegerField(help_text="Higher after every change of status.")
    severity = serializers.ChoiceField(
        choices=[s.value for s in Severity], source="lifecycle.severity"
    )
    status = serializers.ChoiceField(choices=[s.value for s in Status], source="lifecycle.status")
    claimed_by = ActorOutput(source="lifecycle.claimed_by", allow_null=True)
    claimed_at = serializers.SerializerMethodField()
    resolved_by = ActorOutput(
        source="lifecycle.resolved_by",
        allow_null=True,
        help_text="null when the system resolved it (or it is not resolved).",
    )
    resolved_at = serializers.SerializerMethodField()
    escalated_at = serializers.SerializerMethodField()
    key = serializers.CharField(source="notification.key", allow_null=True)
    occurrences = serializers.IntegerField(source="lifecycle.occurrences")
    silenced = serializers.BooleanField(
        source="lifecycle.silenced", help_text="Held back by a planned silence (SPEC 17)."
    )
    flapping = serializers.BooleanField(
        source="lifecycle.flapping",
        help_text="Its key flapped (SPEC 17): raised again quietly, without notifying anyone.",
    )
    snoozed_until = serializers.SerializerMethodField(
        help_text="My snooze of it: when it comes back (null: not snoozed by me)."
    )
    quiet = serializers.BooleanField(
        help_text="It came quietly to me: beyond my noise budget (NOISE_BUDGET_PER_HOUR alerts "
        "I could see in the hour before it; never a critical one). Listed and unread, but not "
        "pushed, sounded or reminded."
    )
    actions = serializers.SerializerMethodField(
        help_text="The active actions of its type (SPEC 14), labels in the request's language; "
        "one whose confirm_field this alert's data lacks is `available: false`, with a reason."
    )

    @extend_schema_field(ActionOutput(many=True))
    def get_actions(self, item: InboxItem) -> list[dict[str, Any]]:
        n = item.notification
        return hooks.actions.fit(hooks.actions.of(n.message_type), n.data)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_snoozed_until(self, item: InboxItem) -> str | None:
        return _iso_or_none(item.snoozed_until_ms)

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_created_at(self, item: InboxItem) -> str:
        return iso_ms(item.notification.created_at_ms)

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_expires_at(self, item: InboxItem) -> str:
        return iso_ms(item.notification.expires_at_ms)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_claimed_at(self, item: InboxItem) -> str | None:
        return _iso_or_none(item.lifecycle.claimed_at_ms)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_resolved_at(self, item: InboxItem) -> str | None:
        return _iso_or_none(item.lifecycle.resolved_at_ms)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_escalated_at(self, item: InboxItem) -> str | None:
        return _iso_or_none(item.lifecycle.escalated_at_ms)


def _iso_or_none(ms: int | None) -> str | None:
    return None if ms is None else iso_ms(ms)


# The hot answers (list, unread, claim/release/resolve, the stream's events) are built by the
# plain functions below, not by the serializers: a serializer's `.data` was a quarter of an
# unread poll (issue 22). The serializers above stay the OpenAPI schema's description of these
# answers, and tests/notifications/test_output.py checks that both give the same dicts: a new
# key goes into NotificationOutput and `notification_dict` together.


def _actor(actor: Actor | None) -> dict[str, Any] | None:
    return None if actor is None else {"id": int(actor.id), "username": str(actor.username)}


def notification_dict(
    item: InboxItem, actions: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An item as NotificationOutput gives it (same keys, same order, same values); `actions`
    when the caller has them already (the event stream), else from the provider. Shared and
    read-only when the item never changed since publishing (`_shown`)."""
    n = item.notification
    life = item.state
    snoozed = item.snoozed_until_ms
    if actions is None:
        actions = hooks.actions.of(n.message_type)
    plain = life is None and snoozed is None
    if plain:
        shown_key = (id(n), bool(item.read), int(item.cursor), bool(item.quiet), id(actions))
        kept = _shown.get(shown_key)
        if kept is not None and kept[0] is n and kept[1] is actions:
            return kept[2]
    answer = {
        "id": str(n.id),
        "message_type": str(n.message_type),
        "warehouse": int(n.warehouse),
        "title": str(n.title),
        "body": str(n.body),
        "data": n.data,
        "created_at": iso_ms(n.created_at_ms),
        "expires_at": iso_ms(n.expires_at_ms),
        "read": bool(item.read),
        "cursor": int(item.cursor),
    }
    if life is None:
        # Never changed since publishing (most items of a page): Lifecycle.initial's values,
        # without making one.
        answer.update(_UNCHANGED)
        answer["severity"] = _SEVERITY.get(n.severity) or str(Severity(n.severity))
    else:
        answer.update(
            severity=str(life.severity),
            status=str(life.status),
            claimed_by=_actor(life.claimed_by),
            claimed_at=_iso_or_none(life.claimed_at_ms),
            resolved_by=_actor(life.resolved_by),
            resolved_at=_iso_or_none(life.resolved_at_ms),
            escalated_at=_iso_or_none(life.escalated_at_ms),
        )
    answer["key"] = None if n.key is None else str(n.key)
    answer["occurrences"] = 1 if life is None else int(life.occurrences)
    answer["silenced"] = False if life is None else bool(life.silenced)
    answer["flapping"] = False if life is None else bool(life.flapping)
    answer["snoozed_until"] = None if snoozed is None else iso_ms(snoozed)
    answer["quiet"] = bool(item.quiet)
    answer["actions"] = hooks.actions.fit(actions, n.data)
    if not plain:
        return answer
    shown = ReadOnlyDict(answer)
    if len(_shown) >= SHOWN_KEPT:
        _shown.clear()  # simpler than an LRU, and a miss only costs making it
    # Kept with what it was made of: neither id is reused while they are kept.
    _shown[shown_key] = (n, actions, shown)
    return shown


# notification_dict's answers for items never changed since publishing, per process: found by
# the parsed notification, what the user's answer adds to it (read, cursor, quiet) and the
# actions list it was fitted from (the catalog's, per language: a new one after any change),
# so none can be stale. Polls show the same items over and over; a first page of 50 spent a
# seventh of its CPU making them. About a kilobyte each.
SHOWN_KEPT = 4096
_shown: dict[
    tuple[int, bool, int, bool, int], tuple[Notification, list[dict[str, Any]], dict[str, Any]]
] = {}
_SEVERITY = {str(severity.value): str(severity) for severity in Severity}


# The lifecycle keys of an item never changed since publishing, in NotificationOutput's order
# (severity, filled in per item, holds its place first).
_UNCHANGED: dict[str, Any] = {
    "severity": None,
    "status": str(Status.OPEN),
    "claimed_by": None,
    "claimed_at": None,
    "resolved_by": None,
    "resolved_at": None,
    "escalated_at": None,
}


def notification_dicts(items: list[InboxItem]) -> list[dict[str, Any]]:
    """Items as NotificationOutput gives them, each type's `actions` looked up once."""
    actions: dict[str, list[dict[str, Any]]] = {}
    found = []
    for item in items:
        code = item.notification.message_type
        of_type = actions.get(code)
        if of_type is None:
            of_type = actions[code] = hooks.actions.of(code)
        found.append(notification_dict(item, of_type))
    return found


def inbox_page_dict(page: InboxPage) -> dict[str, Any]:
    """A page as InboxPageOutput gives it."""
    return {
        "results": notification_dicts(page.items),
        "unread_count": int(page.unread_count),
        "next_since": int(page.next_since),
        "has_more": bool(page.has_more),
    }


def unread_dict(summary: UnreadSummary) -> dict[str, Any]:
    """A summary as UnreadOutput gives it."""
    counts = summary.by_severity
    return {
        "unread_count": int(summary.unread_count),
        "latest": notification_dicts(summary.latest),
        "by_severity": {
            "info": int(counts["info"]),
            "warning": int(counts["warning"]),
            "critical": int(counts["critical"]),
        },
        "quiet": int(summary.quiet),
    }


class InboxPageOutput(serializers.Serializer):
    results = NotificationOutput(many=True, source="items")
    unread_count = serializers.IntegerField()
    next_since = serializers.IntegerField()
    has_more = serializers.BooleanField(
        help_text="True when the page stopped before the newest change (it was full, or it "
        "ended early to bound its work): ask again from `next_since`. Only false means caught up."
    )


class BySeverityOutput(serializers.Serializer):
    info = serializers.IntegerField()
    warning = serializers.IntegerField()
    critical = serializers.IntegerField()


class UnreadOutput(serializers.Serializer):
    unread_count = serializers.IntegerField()
    latest = NotificationOutput(many=True)
    by_severity = BySeverityOutput(help_text="Unread ones by their current severity.")
    quiet = serializers.IntegerField(
        help_text="How many of my unread came quietly (beyond my noise budget), counted among "
        "my newest 100 unread."
    )


class MarkReadOutput(serializers.Serializer):
    marked = serializers.IntegerField()
    unread_count = serializers.IntegerField()


class PublishOutput(serializers.Serializer):
    id = serializers.CharField()
    recipients = serializers.IntegerField()
    created_at = serializers.SerializerMethodField()

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_created_at(self, result) -> str:
        return iso_ms(result.created_at_ms)


class LifecycleInput(WarehouseQuery):
    """Body of claim, release and resolve: the warehouse the notification is in."""


class SnoozeInput(WarehouseQuery):
    until = serializers.CharField(
        help_text='An ISO 8601 time with its zone (e.g. "2026-11-21T08:15:00Z"), or '
        '"next_shift": the next start of a shift of one of my roles in that warehouse.'
    )

    def validate_until(self, value: str) -> int | str:
        """ms since the epoch, or "next_shift" (the service checks the range)."""
        if value == "next_shift":
            return value
        parsed = parse_datetime(value.strip())
        if parsed is None or parsed.tzinfo is None:
            raise serializers.ValidationError(
                _(
                    'Send an ISO 8601 time with its zone (e.g. "2026-11-21T08:15:00Z") or '
                    '"next_shift".'
                )
            )
        return int(parsed.timestamp() * 1000)


class SnoozedOutput(serializers.Serializer):
    results = NotificationOutput(many=True)


class DetailOutput(serializers.Serializer):
    detail = serializers.CharField()


class ConflictOutput(DetailOutput):
    claimed_by = ActorOutput(allow_null=True, help_text="Who holds it (null: nobody).")


class RefusalOutput(DetailOutput):
    """A 403: `claimed_by` when the refusal is that someone else holds the alert."""

    claimed_by = ActorOutput(
        allow_null=True, required=False, help_text="Who holds it (only when it is held)."
    )


class HistoryEntryOutput(serializers.Serializer):
    event = serializers.ChoiceField(choices=[e.value for e in Event])
    at = serializers.SerializerMethodField()
    by = ActorOutput(
        allow_null=True,
        help_text="null: the system (or the publisher); for `woke`, time or a re-raise, "
        "escalation or release woke it.",
    )
    until = serializers.SerializerMethodField(help_text="`snoozed`: until when; else null.")
    code = serializers.CharField(
        allow_null=True,
        help_text="`action`, `action_succeeded`, `action_failed`: the action's code; else null.",
    )
    recipients = serializers.IntegerField(
        allow_null=True, help_text="`emailed`: how many it was sent to; else null."
    )

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_until(self, entry: HistoryEntry) -> str | None:
        return _iso_or_none(entry.until_ms)

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_at(self, entry: HistoryEntry) -> str:
        return iso_ms(entry.at_ms)


class HistoryOutput(serializers.Serializer):
    results = HistoryEntryOutput(many=True)


class ReportQuery(serializers.Serializer):
    days = serializers.IntegerField(
        min_value=1,
        max_value=settings.ALERT_REPORT_RETENTION_DAYS,
        default=7,
        help_text="The last N UTC days, today included.",
    )


class SpreadOutput(serializers.Serializer):
    median = serializers.FloatField(help_text="Seconds.")
    p90 = serializers.FloatField(help_text="Seconds: 90% took at most this long.")
    samples = serializers.IntegerField()


class ReportRowOutput(serializers.Serializer):
    warehouse = serializers.IntegerField(source="warehouse_id")
    warehouse_code = serializers.CharField()
    message_type = serializers.CharField()
    message_type_name = serializers.CharField(help_text="In the language of the request.")
    published = serializers.IntegerField()
    claimed = serializers.IntegerField()
    resolved = serializers.IntegerField()
    escalated = serializers.IntegerField()
    time_to_claim = SpreadOutput(allow_null=True, help_text="From publishing to the first claim.")
    time_to_resolve = SpreadOutput(allow_null=True, help_text="From publishing to resolving.")


class ShiftReportRowOutput(serializers.Serializer):
    warehouse = serializers.IntegerField(source="warehouse_id")
    warehouse_code = serializers.CharField()
    role = serializers.CharField()
    shift = serializers.CharField(source="shift_name")
    runs = serializers.IntegerField(help_text="Runs of the shift that ended (handovers made).")
    accepted = serializers.IntegerField(help_text="Handovers accepted.")
    open_at_end = serializers.IntegerField(help_text="Alerts open at the ends, summed.")
    claimed_off_shift = serializers.IntegerField()
    released = serializers.IntegerField()
    escalated = serializers.IntegerField(help_text="Escalated during the runs.")
    resolved = serializers.IntegerField(help_text="Resolved during the runs.")
    time_to_claim_median = serializers.FloatField(
        allow_null=True,
        help_text="Seconds: the median over the runs of each run's median time to claim "
        "(of the alerts it resolved).",
    )


class AlertReportOutput(serializers.Serializer):
    days = serializers.IntegerField()
    first_day = serializers.DateField()
    last_day = serializers.DateField()
    results = ReportRowOutput(many=True, source="rows")
    per_shift = ShiftReportRowOutput(
        many=True, help_text="What each shift handed over in the period (SPEC 13)."
    )


class RaisedKeyOutput(serializers.Serializer):
    key = serializers.CharField()
    raises = serializers.IntegerField(help_text="Publishes and raises again of alerts with it.")


class NoiseRowOutput(serializers.Serializer):
    warehouse = serializers.IntegerField(source="warehouse_id")
    warehouse_code = serializers.CharField()
    message_type = serializers.CharField()
    message_type_name = serializers.CharField(help_text="In the language of the request.")
    alerts = serializers.IntegerField(help_text="Alerts published.")
    alerts_per_operator_hour = serializers.FloatField(
        allow_null=True,
        help_text="Alerts per operator-hour on shift in the warehouse (each run's length times "
        "its role's members); null when nobody was on a shift there.",
    )
    flapping = serializers.IntegerField(help_text="Raises that flapped (no new alert).")
    silenced = serializers.IntegerField(help_text="Alerts held back by a planned silence.")
    resolved_by_system_unclaimed = serializers.IntegerField(
        help_text="Alerts the system resolved (a rule's condition cleared) before anyone "
        "claimed them."
    )
    share_resolved_by_system_unclaimed = serializers.FloatField(
        allow_null=True, help_text="The same, as a share of `alerts` (null without alerts)."
    )
    top_keys = RaisedKeyOutput(many=True, help_text="The ten alert keys raised most.")


class ShiftNoiseRowOutput(serializers.Serializer):
    warehouse = serializers.IntegerField(source="warehouse_id")
    warehouse_code = serializers.CharField()
    role = serializers.CharField()
    shift = serializers.CharField(source="shift_name")
    runs = serializers.IntegerField(help_text="Runs of the shift in the period (up to now).")
    operator_hours = serializers.FloatField()
    operators = serializers.IntegerField(help_text="Members of its role.")
    over_budget = serializers.IntegerField(
        help_text="Operators to whom more than the noise budget came in a clock hour of a run."
    )


class NoiseReportOutput(serializers.Serializer):
    days = serializers.IntegerField()
    first_day = serializers.DateField()
    last_day = serializers.DateField()
    budget_per_hour = serializers.IntegerField(help_text="NOISE_BUDGET_PER_HOUR.")
    results = NoiseRowOutput(many=True, source="rows")
    per_shift = ShiftNoiseRowOutput(many=True)
