"""Notification endpoints: thin views that validate, call one service or selector, serialize."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.parsers import JSONParser, XMLParser
from config.renderers import XMLRenderer

from .. import selectors, services
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


class NotificationListView(NotificationAPIView):
    permission_classes = [IsAuthenticated, CanPublish]

    @extend_schema(
        parameters=[s.InboxQuery],
        responses=s.InboxPageOutput,
        summary="Notifications after a cursor, oldest first",
    )
    def get(self, request: Request) -> Response:
        query = s.InboxQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.inbox_page(
            user=request.user,
            warehouse_id=query.validated_data["warehouse"].pk,
            since=query.validated_data.get("since"),
            limit=query.validated_data["limit"],
            include_read=query.validated_data["include_read"],
        )
        return Response(s.InboxPageOutput(page).data)

    @extend_schema(
        request=s.PublishInput,
        responses={201: s.PublishOutput},
        summary="Publish a notification to its subscribers",
    )
    def post(self, request: Request) -> Response:
        payload = s.PublishInput(data=request.data)
        payload.is_valid(raise_exception=True)
        result = services.publish(**payload.validated_data)
        return Response(s.PublishOutput(result).data, status=status.HTTP_201_CREATED)


class UnreadView(NotificationAPIView):
    @extend_schema(
        parameters=[s.WarehouseQuery],
        responses=s.UnreadOutput,
        summary="Unread count and the latest unread summaries, newest first",
    )
    def get(self, request: Request) -> Response:
        query = s.WarehouseQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        summary = selectors.unread_summary(
            user=request.user, warehouse_id=query.validated_data["warehouse"].pk
        )
        return Response(s.UnreadOutput(summary).data)


class MarkReadView(NotificationAPIView):
    @extend_schema(
        request=s.MarkReadInput,
        responses=s.MarkReadOutput,
        summary="Mark notifications read (for me only)",
    )
    def post(self, request: Request) -> Response:
        payload = s.MarkReadInput(data=request.data)
        payload.is_valid(raise_exception=True)
        ids = payload.validated_data.get("ids")
        result = services.mark_read(
            user=request.user,
            warehouse_id=payload.validated_data["warehouse"].pk,
            ids=None if payload.validated_data["all"] else [str(i) for i in ids],
        )
        return Response(s.MarkReadOutput(result).data)
