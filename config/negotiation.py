"""Content negotiation with a shortcut for what API clients send."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer


class ContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, answered at once when the choice is plain: no `?format=` or format
    suffix, and an `Accept` that is absent, `*/*` or exactly the first renderer's media type.
    DRF then picks that renderer with its own media type too (tests/config/test_negotiation.py
    compares the two); anything else goes through DRF's parsing. Parsing the header and
    ordering media types by precedence was a fifteenth of a poll in a profile."""

    def select_renderer(
        self, request: Any, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        if renderers and format_suffix is None:
            first = renderers[0]
            accept = request.META.get("HTTP_ACCEPT")
            if accept in (None, "*/*", first.media_type) and (
                self.settings.URL_FORMAT_OVERRIDE not in request.query_params
            ):
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)
