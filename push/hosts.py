"""The SSRF guard: the server posts only to `https://` endpoints on the allowed push services.

A subscription's endpoint comes from the browser, that is from a user: without this check a
user could make the server post to any address it can reach (an intranet service, the cloud
metadata address). WEB_PUSH_ALLOWED_HOSTS lists the push services; an entry is a host name
(port 443 only), `host:port`, or `*.domain` (its subdomains, port 443).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

from .models import ENDPOINT_MAX_LENGTH

HTTPS_PORT = 443
# What a push service's URL is made of: printable ASCII, no spaces, no backslash (which some
# URL parsers read as "/" and others do not), no "@" (credentials, or a host in disguise).
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]!$&'()*+,;=%]+$")
_LABELS = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")


class EndpointRefused(ValueError):
    """An endpoint the server will not post to; the message says why (shown to the client)."""


@dataclass(frozen=True)
class AllowedHost:
    host: str
    port: int
    subdomains: bool  # `*.domain`: any host below the domain, not the domain itself

    def admits(self, host: str, port: int) -> bool:
        if port != self.port:
            return False
        if self.subdomains:
            return host.endswith("." + self.host)
        return host == self.host


def parse_entry(entry: str) -> AllowedHost | None:
    """One WEB_PUSH_ALLOWED_HOSTS entry, or None when it is not one."""
    text = entry.strip().lower()
    subdomains = text.startswith("*.")
    if subdomains:
        text = text[2:]
    try:
        parts = urlsplit("https://" + text)
        port = parts.port or HTTPS_PORT
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.netloc != text or not host or "@" in text:
        return None
    if not (_LABELS.match(host) or (":" in host and not subdomains)):  # a name, IPv4 or IPv6
        return None
    return AllowedHost(host=host, port=port, subdomains=subdomains)


def allowed_hosts() -> list[AllowedHost]:
    return [a for a in map(parse_entry, settings.WEB_PUSH_ALLOWED_HOSTS) if a is not None]


def check_endpoint(endpoint: str) -> str:
    """The endpoint, if the server may post to it; EndpointRefused otherwise.

    Checked when a subscription is stored and again before every push (the list may have
    changed since).
    """
    if not isinstance(endpoint, str) or not endpoint:
        raise EndpointRefused(_("The endpoint must be a URL."))
    if len(endpoint) > ENDPOINT_MAX_LENGTH:
        raise EndpointRefused(
            _("The endpoint is longer than %(limit)d characters.") % {"limit": ENDPOINT_MAX_LENGTH}
        )
    if not _URL_CHARACTERS.match(endpoint):
        raise EndpointRefused(_("The endpoint has characters a push service URL does not."))
    try:
        parts = urlsplit(endpoint)
        port = parts.port or HTTPS_PORT
    except ValueError:
        raise EndpointRefused(_("The endpoint is not a valid URL.")) from None
    if parts.scheme != "https":
        raise EndpointRefused(_("The endpoint must be an https:// URL."))
    host = parts.hostname or ""
    if not host or parts.fragment:
        raise EndpointRefused(_("The endpoint is not a valid URL."))
    if not any(allowed.admits(host, port) for allowed in allowed_hosts()):
        raise EndpointRefused(
            _("%(host)s is not a push service this server sends to.") % {"host": host}
        )
    return endpoint
