"""The SSRF guard of Web Push: the server posts only to `https://` endpoints on the allowed push
services (the rules are outbound/hosts.py's, shared with alert actions' webhooks).

A subscription's endpoint comes from the browser, that is from a user: without this check a
user could make the server post to any address it can reach (an intranet service, the cloud
metadata address). WEB_PUSH_ALLOWED_HOSTS lists the push services; an entry is a host name
(port 443 only), `host:port`, or `*.domain` (its subdomains, port 443).
"""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _

from outbound.hosts import AllowedHost, Reason, URLRefused, check_url, parse_entry

from .models import ENDPOINT_MAX_LENGTH

__all__ = ["AllowedHost", "EndpointRefused", "allowed_hosts", "check_endpoint", "parse_entry"]


class EndpointRefused(ValueError):
    """An endpoint the server will not post to; the message says why (shown to the client)."""


def allowed_hosts() -> list[AllowedHost]:
    return [a for a in map(parse_entry, settings.WEB_PUSH_ALLOWED_HOSTS) if a is not None]


def _message(refused: URLRefused) -> str:
    if refused.reason == Reason.NOT_TEXT:
        return _("The endpoint must be a URL.")
    if refused.reason == Reason.TOO_LONG:
        return _("The endpoint is longer than %(limit)d characters.") % {
            "limit": ENDPOINT_MAX_LENGTH
        }
    if refused.reason == Reason.CHARACTERS:
        return _("The endpoint has characters a push service URL does not.")
    if refused.reason == Reason.NOT_HTTPS:
        return _("The endpoint must be an https:// URL.")
    if refused.reason == Reason.HOST:
        return _("%(host)s is not a push service this server sends to.") % {"host": refused.host}
    return _("The endpoint is not a valid URL.")


def check_endpoint(endpoint: str) -> str:
    """The endpoint, if the server may post to it; EndpointRefused otherwise.

    Checked when a subscription is stored and again before every push (the list may have
    changed since).
    """
    try:
        return check_url(
            endpoint, allowed=settings.WEB_PUSH_ALLOWED_HOSTS, max_length=ENDPOINT_MAX_LENGTH
        )
    except URLRefused as refused:
        raise EndpointRefused(_message(refused)) from None
