"""Planned silences and mutes (SPEC 17). Thin views."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import errors
from config.users import User, signed_in
from config.validation import validated
from notifications.api.serializers import WarehouseField, warehouse_from_query
from notifications.domain import Severity
from subscriptions.models import MessageType

from .. import selectors, services
from ..models import Silence


def _ms_iso(value: dt.datetime) -> str:
    return value.isoformat()


def _member_or_404(user: User, warehouse_id: int) -> None:
    if not selectors.is_member(user=user, warehouse_id=warehouse_id):
        raise errors.NotFound(gettext("No such warehouse of yours."))


def silence_json(silence: Silence) -> dict[str, Any]:
    return {
        "id": silence.pk,
        "warehouse": silence.warehouse_id,
        "message_types": sorted(t.code for t in silence.message_types.all()),
        "starts_at": _ms_iso(silence.starts_at),
        "ends_at": _ms_iso(silence.ends_at),
        "reason": silence.reason,
        "include_critical": silence.include_critical,
        "created_by": None
        if silence.created_by is None
        else {"id": silence.created_by.pk, "username": silence.created_by.get_username()},
    }


class SilenceInput(serializers.Serializer):
    warehouse = WarehouseField()
    message_types = serializers.SlugRelatedField(
        slug_field="code",
        queryset=MessageType.objects.filter(is_active=True),
        many=True,
        required=False,
    )
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    reason = serializers.CharField(max_length=200)
    include_critical = serializers.BooleanField(default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["ends_at"] <= attrs["starts_at"]:
            raise serializers.ValidationError({"ends_at": _("A silence must end after it starts.")})
        return attrs


class SilencesView(APIView):
    @extend_schema(request=SilenceInput, responses={201: dict}, summary="Plan a silence")
    def post(self, request: Request) -> Response:
        user = signed_in(request)
        if not user.has_perm("quiet.add_silence"):
            raise errors.Forbidden(gettext("You may not plan silences."))
        values = validated(SilenceInput, request.data)
        _member_or_404(user, values["warehouse"].pk)
        silence = services.silence_create(
            warehouse=values["warehouse"],
            message_types=values.get("message_types", []),
            starts_at=values["starts_at"],
            ends_at=values["ends_at"],
            reason=values["reason"],
            include_critical=values["include_critical"],
            created_by=user,
        )
        return Response(silence_json(silence), status=201)

    @extend_schema(responses={200: dict}, summary="A warehouse's current and future silences")
    def get(self, request: Request) -> Response:
        user = signed_in(request)
        warehouse = warehouse_from_query(request.query_params)
        _member_or_404(user, warehouse.pk)
        found = selectors.current_and_future(warehouse_id=warehouse.pk)
        return Response({"results": [silence_json(s) for s in found]})


class MuteInput(serializers.Serializer):
    warehouse = WarehouseField()
    until = serializers.DateTimeField()
    below = serializers.ChoiceField(
        choices=[Severity.WARNING.value, Severity.CRITICAL.value], default="critical"
    )


def mute_json(mute: Any) -> dict[str, Any] | None:
    if mute is None:
        return None
    return {
        "until": dt.datetime.fromtimestamp(mute.until_ms / 1000, tz=dt.UTC).isoformat(),
        "below": ("info", "warning", "critical")[mute.below],
    }


class MuteView(APIView):
    @extend_schema(request=MuteInput, responses={200: dict}, summary="Mute, for me, below a floor")
    def put(self, request: Request) -> Response:
        user = signed_in(request)
        values = validated(MuteInput, request.data)
        _member_or_404(user, values["warehouse"].pk)
        mute = services.mute_set(
            user=user,
            warehouse_id=values["warehouse"].pk,
            until=values["until"],
            below=Severity(values["below"]),
        )
        return Response({"mute": mute_json(mute)})

    @extend_schema(responses={200: dict}, summary="My mute of a warehouse, or null")
    def get(self, request: Request) -> Response:
        user = signed_in(request)
        warehouse = warehouse_from_query(request.query_params)
        _member_or_404(user, warehouse.pk)
        return Response(
            {"mute": mute_json(selectors.mute_of(user=user, warehouse_id=warehouse.pk))}
        )

    @extend_schema(responses={200: dict}, summary="End my mute")
    def delete(self, request: Request) -> Response:
        user = signed_in(request)
        warehouse = warehouse_from_query(request.query_params)
        _member_or_404(user, warehouse.pk)
        services.mute_end(user=user, warehouse_id=warehouse.pk)
        return Response({"mute": None})
