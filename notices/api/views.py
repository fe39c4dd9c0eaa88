"""Notice endpoints (SPEC 15): publish, list, read, edit, acknowledge, the roster. Thin views."""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import errors, timestamps
from config.json_renderer import JSONRenderer
from config.users import User, signed_in
from config.validation import validated
from notifications.api.serializers import DetailOutput

from .. import selectors, services
from ..models import Notice
from . import serializers as s


def _json(notice: Notice, user: User) -> dict:
    return s.notice_json(notice, roster_allowed=selectors.may_see_roster(user=user, notice=notice))


def _visible(request: Request, notice_id: int) -> tuple[User, Notice]:
    user = signed_in(request)
    notice = selectors.notice_for(user=user, notice_id=notice_id)
    if notice is None:
        raise errors.NotFound(gettext("No such notice for you."))
    return user, notice


class NoticeListView(APIView):
    @extend_schema(
        parameters=[s.NoticeQuery],
        responses={200: s.NoticeListOutput},
        operation_id="notices_list",
        summary="The notices of a warehouse for me, newest first",
        description="Those whose audience I am in (staff: all), each with `my_ack` for the "
        "current version.",
    )
    def get(self, request: Request) -> Response:
        query = validated(s.NoticeQuery, request.query_params)
        user = signed_in(request)
        notices = selectors.notices_for(
            user=user, warehouse_id=query["warehouse"].pk, limit=query["limit"]
        )
        return Response({"results": [_json(n, user) for n in notices]})

    @extend_schema(
        request=s.NoticeInput,
        responses={201: s.NoticeOutput, 403: DetailOutput},
        summary="Publish a notice",
        description="Needs the permission `notices.add_notice`. Publishes a NOTICE "
        "notification to its roles' and users' inboxes, whether or not they subscribe.",
    )
    def post(self, request: Request) -> Response:
        user = signed_in(request)
        if not user.has_perm("notices.add_notice"):
            raise errors.Forbidden(gettext("You may not publish notices."))
        payload = validated(s.NoticeInput, request.data)
        notice = services.notice_create(user=user, **payload)
        found = selectors.notice_for(user=user, notice_id=notice.pk) or notice
        return Response(_json(found, user), status=status.HTTP_201_CREATED)


class NoticeView(APIView):
    @extend_schema(
        responses={200: s.NoticeOutput, 404: DetailOutput},
        summary="One notice",
        description="Its audience, members of its escalation role, and staff; others 404.",
    )
    def get(self, request: Request, notice_id: int) -> Response:
        user, notice = _visible(request, notice_id)
        return Response(_json(notice, user))

    @extend_schema(
        request=s.NoticeChangeInput,
        responses={200: s.NoticeOutput, 403: DetailOutput, 404: DetailOutput},
        summary="Edit a notice",
        description="Needs `notices.change_notice`. A changed title or body makes a new "
        "version that everyone acknowledges again (earlier acknowledgements stay recorded); "
        "it is published again. `roles` and `users` replace the audience.",
    )
    def patch(self, request: Request, notice_id: int) -> Response:
        user, notice = _visible(request, notice_id)
        if not user.has_perm("notices.change_notice"):
            raise errors.Forbidden(gettext("You may not edit notices."))
        payload = validated(s.NoticeChangeInput, request.data)
        services.notice_update(notice_id=notice.pk, changes=payload)
        _user, changed = _visible(request, notice_id)
        return Response(_json(changed, user))


class NoticeAckView(APIView):
    @extend_schema(
        request=s.AckInput,
        responses={200: s.NoticeOutput, 404: DetailOutput, 409: s.VersionConflictOutput},
        summary="I have read this (once per version)",
        description="Records my acknowledgement of `version` once (again: 200, the first time "
        "kept in `my_ack`). A version that is not the current one is 409 with `version`; "
        "outside the audience 404.",
    )
    def post(self, request: Request, notice_id: int) -> Response:
        user = signed_in(request)
        payload = validated(s.AckInput, request.data)
        services.notice_ack(user=user, notice_id=notice_id, version=payload["version"])
        _user, notice = _visible(request, notice_id)
        return Response(_json(notice, user))


class NoticeRosterView(APIView):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, s.CsvRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format", str, enum=["json", "csv"], description="csv: the roster as CSV."
            )
        ],
        responses={
            (200, "application/json"): s.RosterOutput,
            (200, "text/csv"): OpenApiTypes.STR,
            (403, "application/json"): DetailOutput,
            (403, "text/csv"): OpenApiTypes.STR,
            (404, "application/json"): DetailOutput,
            (404, "text/csv"): OpenApiTypes.STR,
        },
        summary="Who has read the notice's current version",
        description="Staff and members of its escalation role. Everyone in the audience now "
        "(also members who joined a role after publishing), the missing first.",
    )
    def get(self, request: Request, notice_id: int) -> Response | HttpResponse:
        user, notice = _visible(request, notice_id)
        if not selectors.may_see_roster(user=user, notice=notice):
            raise errors.Forbidden(gettext("Only staff and its escalation role see the roster."))
        roster = selectors.roster(notice=notice, at=timestamps.now())
        if request.query_params.get("format") == "csv":
            response = HttpResponse(s.roster_csv([roster]), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="notice-{notice.pk}-v{notice.version}-roster.csv"'
            )
            return response
        return Response(s.roster_json(roster))
