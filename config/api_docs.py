"""The OpenAPI schema (`/api/schema/`) and its docs page (`/api/docs/`), SPEC 10: for signed-in
users when DEBUG is off, or for everyone with API_DOCS_PUBLIC=1. The schema lists every
operation of the API; a site that wants it public says so."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.json_renderer import JSONRenderer


class DocsAccess(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        if settings.DEBUG or settings.API_DOCS_PUBLIC:
            return True
        return bool(request.user and request.user.is_authenticated)


class JsonErrors(APIView):
    """Refusals and other errors as the API's JSON answer (`{"detail": ...}`): the schema's own
    renderers (YAML, OpenAPI JSON) and the page's (HTML) would otherwise render them."""

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        if getattr(response, "exception", False):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class SchemaView(JsonErrors, SpectacularAPIView):
    permission_classes = [DocsAccess]


class DocsView(JsonErrors, SpectacularSwaggerView):
    permission_classes = [DocsAccess]
