"""The client's address behind the reverse proxy (SPEC 10).

`REMOTE_ADDR` is whoever opened the connection: behind nginx, the proxy. A proxy appends the
address it saw to `X-Forwarded-For`; anything left of that is what the client (or a proxy
before it) wrote, and anyone can write anything there. So the header is read from the right,
and only while the hop that wrote an entry is one of TRUSTED_PROXIES: the first address no
trusted proxy stands behind is the client's. A peer that is not a trusted proxy is the client
itself, whatever header it sends.

Login throttling (django-axes, through AXES_CLIENT_IP_CALLABLE) and the API's throttle key on
this address. (django-ipware, axes' other way, decides from the header alone: it does not look
at which peer sent it.)
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=4)
def trusted_networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    """TRUSTED_PROXIES parsed: addresses (`127.0.0.1`) or networks (`10.0.0.0/8`)."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"TRUSTED_PROXIES: {entry!r} is not an IP address or network "
                "(e.g. 127.0.0.1 or 10.0.0.0/8)."
            ) from None
    return tuple(networks)


def parsed(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    # An IPv4 client of a socket listening on IPv6 shows as ::ffff:a.b.c.d.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_address(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or, while that and then each address to its left in
    X-Forwarded-For is a trusted proxy, the next address to the left."""
    peer = request.META.get("REMOTE_ADDR") or None
    trusted = trusted_networks(tuple(settings.TRUSTED_PROXIES))
    hop = parsed(peer) if peer else None
    if hop is None:
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    entries = [entry for entry in forwarded.split(",") if entry.strip()]
    while any(hop in network for network in trusted) and entries:
        earlier = parsed(entries.pop())
        if earlier is None:
            # A trusted proxy wrote something that is not an address: nothing beyond it is
            # known, so the client is the last address that is.
            break
        hop = earlier
    return str(hop)
