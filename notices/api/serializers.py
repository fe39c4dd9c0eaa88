"""Input validation and output shapes of the notices API (SPEC 15)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer

from config import jsonvalues
from config.timestamps import iso
from notifications.api.serializers import WarehouseField
from shifts.api.serializers import PersonOutput, RoleOutput

from ..models import Notice, Severity
from ..selectors import Roster

MAX_ROLES = 100
MAX_USERS = 1000


def _text(value: str) -> str:
    try:
        jsonvalues.check(value, text=True)
    except jsonvalues.JsonValueError as exc:
        raise serializers.ValidationError(str(exc)) from None
    return value


class _NoticeFields(serializers.Serializer):
    title = serializers.CharField(max_length=settings.NOTIFICATION_TITLE_MAX_LENGTH)
    body = serializers.CharField(
        max_length=settings.NOTIFICATION_BODY_MAX_LENGTH,
        allow_blank=True,
        trim_whitespace=False,
        default="",
    )
    # The values only: the schema describes every severity field alike, in any language.
    severity = serializers.ChoiceField(choices=Severity.values, default=Severity.WARNING)
    roles = serializers.PrimaryKeyRelatedField(
        queryset=Group.objects.all(), many=True, default=list
    )
    users = serializers.PrimaryKeyRelatedField(
        queryset=User.objects.filter(is_active=True), many=True, default=list
    )
    requires_ack = serializers.BooleanField(default=True)
    due_at = serializers.DateTimeField(allow_null=True, default=None)
    escalation_role = serializers.PrimaryKeyRelatedField(
        queryset=Group.objects.all(), allow_null=True, default=None
    )

    def validate_roles(self, value: list[Group]) -> list[Group]:
        if len(value) > MAX_ROLES:
            raise serializers.ValidationError(_("At most %(n)d roles.") % {"n": MAX_ROLES})
        return value

    def validate_users(self, value: list[User]) -> list[User]:
        if len(value) > MAX_USERS:
            raise serializers.ValidationError(_("At most %(n)d users.") % {"n": MAX_USERS})
        return value

    def validate_title(self, value: str) -> str:
        return _text(value)

    def validate_body(self, value: str) -> str:
        return _text(value)


class NoticeInput(_NoticeFields):
    warehouse = WarehouseField()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("roles") and not attrs.get("users"):
            raise serializers.ValidationError(
                {"roles": [_("A notice needs an audience: roles or users.")]}
            )
        return attrs


class NoticeChangeInput(_NoticeFields):
    is_closed = serializers.BooleanField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, partial=True, **kwargs)


class NoticeQuery(serializers.Serializer):
    warehouse = WarehouseField()
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)


class AckInput(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class NoticeOutput(serializers.Serializer):
    """Notice (documentation of the shape; views build it with notice_json)."""

    id = serializers.IntegerField()
    warehouse = serializers.IntegerField()
    title = serializers.CharField()
    body = serializers.CharField()
    severity = serializers.ChoiceField(choices=Severity.values)
    roles = RoleOutput(many=True)
    users = PersonOutput(many=True)
    requires_ack = serializers.BooleanField()
    due_at = serializers.CharField(allow_null=True)
    escalation_role = RoleOutput(allow_null=True)
    created_by = PersonOutput(allow_null=True)
    created_at = serializers.CharField()
    version = serializers.IntegerField(help_text="Grows each time the title or body changes.")
    version_at = serializers.CharField(help_text="When the current version was made.")
    is_closed = serializers.BooleanField()
    published = serializers.BooleanField(
        help_text="Whether the current version's notification went out (false for a few "
        "seconds after Redis failed: beat publishes it)."
    )
    my_ack = serializers.CharField(
        allow_null=True, help_text="When I acknowledged the current version (null: not yet)."
    )
    in_audience = serializers.BooleanField(help_text="Whether I am asked to read it.")
    roster_allowed = serializers.BooleanField(help_text="Whether I may see its roster.")
    escalated_at = serializers.CharField(allow_null=True)


class NoticeListOutput(serializers.Serializer):
    results = NoticeOutput(many=True)


class VersionConflictOutput(serializers.Serializer):
    detail = serializers.CharField()
    version = serializers.IntegerField(help_text="The current version.")


def _when(value: Any) -> str | None:
    return None if value is None else iso(value)


def notice_json(notice: Notice, *, roster_allowed: bool) -> dict[str, Any]:
    """Notice as the API shows it (`my_ack` and `in_audience` set by the selectors)."""
    role = notice.escalation_role
    author = notice.created_by
    return {
        "id": notice.pk,
        "warehouse": notice.warehouse_id,
        "title": notice.title,
        "body": notice.body,
        "severity": notice.severity,
        "roles": [{"id": g.pk, "name": g.name} for g in notice.roles.all()],
        "users": [{"id": u.pk, "username": u.get_username()} for u in notice.users.all()],
        "requires_ack": notice.requires_ack,
        "due_at": _when(notice.due_at),
        "escalation_role": None if role is None else {"id": role.pk, "name": role.name},
        "created_by": None
        if author is None
        else {"id": author.pk, "username": author.get_username()},
        "created_at": iso(notice.created_at),
        "version": notice.version,
        "version_at": iso(notice.version_at),
        "is_closed": notice.is_closed,
        "published": notice.published_version >= notice.version,
        "my_ack": _when(getattr(notice, "my_ack", None)),
        "in_audience": bool(getattr(notice, "in_audience", False)),
        "roster_allowed": roster_allowed,
        "escalated_at": _when(notice.escalated_at),
    }


class RosterRowOutput(serializers.Serializer):
    user = PersonOutput()
    acked_at = serializers.CharField(allow_null=True)
    on_shift = serializers.BooleanField()


class RosterOutput(serializers.Serializer):
    version = serializers.IntegerField()
    total = serializers.IntegerField()
    acknowledged = serializers.IntegerField()
    missing = serializers.IntegerField()
    results = RosterRowOutput(many=True)


def roster_json(roster: Roster) -> dict[str, Any]:
    return {
        "version": roster.version,
        "total": roster.total,
        "acknowledged": roster.acknowledged,
        "missing": roster.missing,
        "results": [
            {
                "user": {"id": row.user_id, "username": row.username},
                "acked_at": _when(row.acked_at),
                "on_shift": row.on_shift,
            }
            for row in roster.rows
        ],
    }


CSV_HEADER = ["notice", "version", "user_id", "username", "acked_at", "on_shift"]


def _cell(value: str) -> str:
    # A spreadsheet runs a cell starting with = + - @ as a formula: user names may start so.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def roster_rows(roster: Roster) -> list[list[str]]:
    """The roster as CSV rows (without the header)."""
    return [
        [
            str(roster.notice_id),
            str(roster.version),
            str(row.user_id),
            _cell(row.username),
            "" if row.acked_at is None else iso(row.acked_at),
            "yes" if row.on_shift else "no",
        ]
        for row in roster.rows
    ]


def roster_csv(rosters: list[Roster]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for roster in rosters:
        writer.writerows(roster_rows(roster))
    return out.getvalue()


class CsvRenderer(BaseRenderer):
    """`?format=csv` of the roster: the view answers the CSV itself; this renders what else it
    may answer (an error) as text."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, str):
            return data.encode()
        if isinstance(data, dict) and "detail" in data:
            return f"{data['detail']}\r\n".encode()
        return b""
