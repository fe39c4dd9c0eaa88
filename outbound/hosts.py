"""The SSRF guard, shared: the server posts only to `https://` URLs on hosts a setting allows.

A URL the server will post to may come from a user (a browser's push endpoint) or from staff
(an alert action's webhook): without this check the server could be made to post to any
address it can reach (an intranet service, the cloud metadata address). Each feature keeps its
own list (WEB_PUSH_ALLOWED_HOSTS, ALERT_WEBHOOK_ALLOWED_HOSTS) and its own words for a refusal;
the rules are these, the same for all: an entry is a host name (port 443 only), `host:port`,
or `*.domain` (its subdomains, port 443), and a URL must be `https://`, printable, without
credentials or a fragment, on an allowed host and port. Callers check a URL when it is stored
and again before every call (the list may have changed since); their HTTP clients never follow
redirects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

HTTPS_PORT = 443
# What a service's URL is made of: printable ASCII, no spaces, no backslash (which some URL
# parsers read as "/" and others do not), no "@" (credentials, or a host in disguise).
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]!$&'()*+,;=%]+$")
_LABELS = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")


class Reason(StrEnum):
    """Why a URL is refused: each caller words it for its own users."""

    NOT_TEXT = "not_text"
    TOO_LONG = "too_long"
    CHARACTERS = "characters"
    INVALID = "invalid"
    NOT_HTTPS = "not_https"
    HOST = "host"


class URLRefused(ValueError):
    """A URL the server will not post to: `reason` says why, `host` which host (HOST)."""

    def __init__(self, reason: Reason, host: str = "") -> None:
        super().__init__(f"{reason}{': ' + host if host else ''}")
        self.reason = reason
        self.host = host


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
    """One entry of an allowed-hosts setting, or None when it is not one."""
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


def check_url(url: object, *, allowed: Iterable[str], max_length: int) -> str:
    """The URL, if it is `https://` on a host of `allowed` (setting entries); URLRefused
    otherwise."""
    if not isinstance(url, str) or not url:
        raise URLRefused(Reason.NOT_TEXT)
    if len(url) > max_length:
        raise URLRefused(Reason.TOO_LONG)
    if not _URL_CHARACTERS.match(url):
        raise URLRefused(Reason.CHARACTERS)
    try:
        parts = urlsplit(url)
        port = parts.port or HTTPS_PORT
    except ValueError:
        raise URLRefused(Reason.INVALID) from None
    if parts.scheme != "https":
        raise URLRefused(Reason.NOT_HTTPS)
    host = parts.hostname or ""
    if not host or parts.fragment:
        raise URLRefused(Reason.INVALID)
    hosts = [a for a in map(parse_entry, allowed) if a is not None]
    if not any(a.admits(host, port) for a in hosts):
        raise URLRefused(Reason.HOST, host)
    return url
