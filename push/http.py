"""The HTTPS client that posts to push services (pywebpush uses it): the shared outbound
session of config/outbound_http.py, the system's CA store, never a redirect."""

from __future__ import annotations

from config.outbound_http import OutboundSession, system_ca

__all__ = ["PushSession", "system_ca"]


class PushSession(OutboundSession):
    """requests as pywebpush uses it: see config.outbound_http.OutboundSession."""
