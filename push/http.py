"""The HTTPS client that posts to push services (pywebpush uses it): the shared outbound
session of outbound/http.py, with the push settings' time limit and answer cap."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from outbound.http import OutboundSession, system_ca

__all__ = ["PushSession", "system_ca"]


class PushSession(OutboundSession):
    """requests as pywebpush uses it (outbound.http.OutboundSession): every push
    request ends within WEB_PUSH_TIMEOUT_SECONDS, whatever pywebpush asks for, and reads at
    most WEB_PUSH_MAX_RESPONSE_BYTES of the answer (both read at each request)."""

    def time_limit(self, asked: Any) -> float:
        return float(settings.WEB_PUSH_TIMEOUT_SECONDS)

    def max_response_bytes(self) -> int:
        return int(settings.WEB_PUSH_MAX_RESPONSE_BYTES)
