"""Notification endpoints: thin views that validate, call one service or selector, serialize."""

from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.permissions import BasePermission, IsAdminUser, IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import errors, idempotency, timestamps
from config.json_renderer import JSONRenderer
from config.parsers import JSONParser, XMLParser
from config.renderers import XMLRenderer
from config.users import signed_in
from config.validation import validated
from directory.held import HeldDirectoryMixin

from .. import lifecycle, noise_report, reports, selectors, services
from . import etags
from . import serializers as s


class CanPublish(BasePermission):
    message = _("Publishing needs the permission notifications.publish_notification.")

    def has_permission(self, request: Request, view: APIView) -> bool:
        if request.method != "POST":
            return True
        return request.user.has_perm("notifications.publish_notification")


class NotificationAPIView(APIView):
    # Legacy WMS clients speak XML (Accept: application/xml); everyone else JSON.
    renderer_classes = [JSONRenderer, XMLRenderer, BrowsableAPIRenderer]
    parser_classes = [JSONParser, XMLParser]


class NotificationListView(HeldDirectoryMixin, NotificationAPIView):
    permission_classes = [IsAuthenticated, CanPublish]
    etag_kind = "list"

    @extend_schema(
        parameters=[s.InboxQuery],
        responses=s.InboxPageOutput,
        summary="Notifications after a cursor, oldest first",
    )
    def get(self, request: Request) -> HttpResponseBase:
        query = s.inbox_query(request.query_params)
        since = query.since
        if since is None:
            since = selectors.lookback_since(timestamps.now_ms())
        return etags.answer(
            request,
            self.etag_kind,
            query,
            lambda role_ids, condition: selectors.inbox_page_if_changed(
                user=signed_in(request),
                warehouse_id=query.warehouse_id,
                since=since,
                limit=query.limit,
                include_read=query.include_read,
                if_none_match=condition,
                role_ids=role_ids,
            ),
            s.inbox_page_dict,
            since=since,
        )

    @extend_schema(
        request=s.PublishInput,
        parameters=[idempotency.OPENAPI_HEADER],
        responses={201: s.PublishOutput, 422: s.DetailOutput},
        summary="Publish a notification to its subscribers",
    )
    def post(self, request: Request) -> Response:
        key = idempotency.key_of(request)
        payload = validated(s.PublishInput, request.data)
        result = services.publish(
            **payload,
            idempotency_key=key,
            idempotency_scope=idempotency.user_scope(signed_in(request).pk),
        )
        return idempotency.answered(
            s.PublishOutput(result).data, replayed=result.replayed, status=status.HTTP_201_CREATED
        )


class UnreadView(HeldDirectoryMixin, NotificationAPIView):
    etag_kind = "unread"

    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses=s.UnreadOutput,
        summary="Unread count and the latest unread summaries, newest first",
    )
    def get(self, request: Request) -> HttpResponseBase:
        query = s.unread_query(request.query_params)
        return etags.answer(
            request,
            self.etag_kind,
            query,
            lambda role_ids, condition: selectors.unread_summary_if_changed(
                user=signed_in(request),
                warehouse_id=query.warehouse_id,
                if_none_match=condition,
                role_ids=role_ids,
            ),
            s.unread_dict,
        )


class MarkReadView(NotificationAPIView):
    @extend_schema(
        request=s.MarkReadInput,
        responses=s.MarkReadOutput,
        summary="Mark notifications read (for me only)",
    )
    def post(self, request: Request) -> Response:
        payload = validated(s.MarkReadInput, request.data)
        result = services.mark_read(
            user=signed_in(request),
            warehouse_id=payload["warehouse"].pk,
            ids=None if payload["all"] else [str(i) for i in payload["ids"]],
        )
        return Response(s.MarkReadOutput(result).data)


LIFECYCLE_RESPONSES = {
    200: s.NotificationOutput,
    404: s.DetailOutput,
    422: s.DetailOutput,  # an Idempotency-Key sent before with another request
}
# Snoozing takes no Idempotency-Key (it is the same whenever sent): no 422.
SNOOZE_RESPONSES = {200: s.NotificationOutput, 404: s.DetailOutput}


class LifecycleView(NotificationAPIView):
    """POST {"warehouse": id}: one change of a notification's status by the signed-in user,
    with an Idempotency-Key when the client may send it again (the page's offline queue)."""

    action = lifecycle.Action.CLAIM

    def post(self, request: Request, notification_id: str) -> Response:
        key = idempotency.key_of(request)
        payload = validated(s.LifecycleInput, request.data)
        done = lifecycle.act(
            self.action,
            user=signed_in(request),
            warehouse_id=payload["warehouse"].pk,
            notification_id=str(notification_id),
            idempotency_key=key,
        )
        return idempotency.answered(s.notification_dict(done.item), replayed=done.replayed)


# What each step's endpoint documents (its schema); the view is the same for all three.
LIFECYCLE_SCHEMAS: dict[lifecycle.Action, dict[str, Any]] = {
    lifecycle.Action.CLAIM: {
        "responses": {**LIFECYCLE_RESPONSES, 409: s.ConflictOutput},
        "summary": 'Claim it ("I\'m on it"); also marks it read for me',
        "description": "Atomic: of concurrent claimers exactly one wins; the others get 409 "
        "with `claimed_by`. Claiming again what I hold is 200; a resolved one is 409.",
    },
    lifecycle.Action.RELEASE: {
        "responses": {**LIFECYCLE_RESPONSES, 403: s.RefusalOutput, 409: s.ConflictOutput},
        "summary": "Release my claim: back to open (only the claimer may)",
    },
    lifecycle.Action.RESOLVE: {
        "responses": LIFECYCLE_RESPONSES,
        "summary": "Resolve it (idempotent)",
    },
}


def lifecycle_view(action: lifecycle.Action) -> type[LifecycleView]:
    """LifecycleView for one step, with that step's schema (`LIFECYCLE_SCHEMAS`)."""
    view = type(f"{action.name.title()}View", (LifecycleView,), {"action": action})
    documented = extend_schema(
        request=s.LifecycleInput,
        parameters=[idempotency.OPENAPI_HEADER],
        **LIFECYCLE_SCHEMAS[action],
    )
    return extend_schema_view(post=documented)(view)


LIFECYCLE_VIEWS = {action: lifecycle_view(action) for action in LIFECYCLE_SCHEMAS}


class SnoozeView(NotificationAPIView):
    """POST: snooze it for me until a time or my next shift; DELETE: wake it now."""

    @extend_schema(
        request=s.SnoozeInput,
        responses={**SNOOZE_RESPONSES, 409: s.ConflictOutput},
        summary="Snooze it for me until a time or my next shift",
        description="For me alone it leaves my unread count, `by_severity`, `latest` and default "
        "list until then, then comes back unread with a new cursor; a re-raise, an escalation "
        "or a release wakes it at once. Open or claimed ones only (a resolved one is 409).",
    )
    def post(self, request: Request, notification_id: str) -> Response:
        payload = validated(s.SnoozeInput, request.data)
        item = lifecycle.snooze(
            user=signed_in(request),
            warehouse_id=payload["warehouse"].pk,
            notification_id=str(notification_id),
            until=payload["until"],
        )
        return Response(s.notification_dict(item))

    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses=SNOOZE_RESPONSES,
        summary="Wake my snooze of it now (unread again for me, with a new cursor)",
    )
    def delete(self, request: Request, notification_id: str) -> Response:
        warehouse = s.warehouse_from_query(request.query_params)
        item = lifecycle.wake(
            user=signed_in(request),
            warehouse_id=warehouse.pk,
            notification_id=str(notification_id),
        )
        return Response(s.notification_dict(item))


class SnoozedView(NotificationAPIView):
    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses=s.SnoozedOutput,
        summary="My snoozed notifications, the one waking first first",
    )
    def get(self, request: Request) -> Response:
        warehouse = s.warehouse_from_query(request.query_params)
        items = selectors.snoozed(user=signed_in(request), warehouse_id=warehouse.pk)
        return Response(s.SnoozedOutput({"results": items}).data)


class HistoryView(NotificationAPIView):
    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses={200: s.HistoryOutput, 404: s.DetailOutput},
        summary="A notification's events, oldest first",
    )
    def get(self, request: Request, notification_id: str) -> Response:
        warehouse = s.warehouse_from_query(request.query_params)
        events = selectors.history(
            user=signed_in(request),
            warehouse_id=warehouse.pk,
            notification_id=str(notification_id),
        )
        if events is None:
            raise errors.NotFound(gettext("No such notification here (or it has expired)."))
        return Response(s.HistoryOutput({"results": events}).data)


class AlertReportView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        parameters=[s.ReportQuery],
        responses={200: s.AlertReportOutput, 403: s.DetailOutput},
        summary="Alerts per warehouse and message type: counts, time to claim and to resolve",
        description="Staff only. Counts of alerts published, claimed, resolved and escalated "
        "over the last `days` UTC days, and the median and 90th percentile of the time from "
        "publishing to the first claim and to resolving.",
    )
    def get(self, request: Request) -> Response:
        query = validated(s.ReportQuery, request.query_params)
        report = reports.alert_report(days=query["days"])
        return Response(s.AlertReportOutput(report).data)


class NoiseReportView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        parameters=[s.ReportQuery],
        responses={200: s.NoiseReportOutput, 400: s.DetailOutput, 403: s.DetailOutput},
        summary="Noise per warehouse and message type, and operators over the budget per shift",
        description="Staff only (SPEC 17). Over the last `days` UTC days: alerts, alerts per "
        "operator-hour on shift, flapping and silenced counts, the share resolved by the "
        "system before anyone claimed them, the ten keys raised most; per shift, how many "
        "operators went over NOISE_BUDGET_PER_HOUR.",
    )
    def get(self, request: Request) -> Response:
        query = validated(s.ReportQuery, request.query_params)
        report = noise_report.noise_report(days=query["days"])
        return Response(s.NoiseReportOutput(report).data)
