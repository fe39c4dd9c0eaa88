"""The client's address (SPEC 10): X-Forwarded-For is believed only from TRUSTED_PROXIES, and
login throttling (django-axes) and the API's throttle key on that address alike."""

from __future__ import annotations

import pytest
from axes.helpers import get_client_ip_address
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from config.client_address import client_address
from config.throttling import UserRateThrottle


def request_from(peer: str, forwarded_for: str | None = None):
    request = RequestFactory().get("/login/", REMOTE_ADDR=peer)
    if forwarded_for is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded_for
    return request


@pytest.fixture(autouse=True)
def loopback_proxy(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1", "::1"]


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "client"),
    [
        # No proxy: the peer.
        ("203.0.113.7", None, "203.0.113.7"),
        # The local nginx: the address it appended (the right-most).
        ("127.0.0.1", "203.0.113.7", "203.0.113.7"),
        ("::1", "2001:db8::7", "2001:db8::7"),
        # What the client sent itself stands left of it and is not believed.
        ("127.0.0.1", "10.9.9.9, 203.0.113.7", "203.0.113.7"),
        # A peer that is not a trusted proxy: its header is not believed at all.
        ("198.51.100.5", "203.0.113.7", "198.51.100.5"),
        ("127.0.0.2", "203.0.113.7", "127.0.0.2"),
        # The proxy sent nothing, or an empty header: the proxy itself.
        ("127.0.0.1", "", "127.0.0.1"),
        # Garbage where the proxy's entry should be: nothing beyond the proxy is known.
        ("127.0.0.1", "203.0.113.7, not-an-address", "127.0.0.1"),
        # An IPv4 client on an IPv6 socket.
        ("::ffff:127.0.0.1", "203.0.113.7", "203.0.113.7"),
    ],
)
def test_the_client_is_the_first_address_no_trusted_proxy_vouches_for(peer, forwarded_for, client):
    assert client_address(request_from(peer, forwarded_for)) == client


def test_a_chain_of_trusted_proxies_is_walked_from_the_right(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1", "10.0.0.0/8"]
    # client -> load balancer 10.0.0.5 -> nginx on this host
    request = request_from("127.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.5")

    assert client_address(request) == "203.0.113.7"


def test_nothing_is_believed_without_trusted_proxies(settings):
    settings.TRUSTED_PROXIES = []

    assert client_address(request_from("127.0.0.1", "203.0.113.7")) == "127.0.0.1"


def test_a_malformed_entry_is_a_configuration_error(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1", "nginx.internal"]

    with pytest.raises(ImproperlyConfigured, match="TRUSTED_PROXIES"):
        client_address(request_from("127.0.0.1", "203.0.113.7"))


def test_login_throttling_counts_the_forwarded_client():
    assert get_client_ip_address(request_from("127.0.0.1", "203.0.113.7")) == "203.0.113.7"
    assert get_client_ip_address(request_from("198.51.100.5", "203.0.113.7")) == "198.51.100.5"


def test_the_api_throttle_keys_anonymous_clients_by_the_same_address():
    """DRF's own rule (NUM_PROXIES unset) would key on the whole header, whoever sent it: a
    client could then start a fresh count with every request."""
    throttle = UserRateThrottle()

    assert throttle.get_ident(request_from("127.0.0.1", "203.0.113.7")) == "203.0.113.7"
    assert throttle.get_ident(request_from("198.51.100.5", "10.0.0.1")) == "198.51.100.5"
    assert throttle.get_ident(request_from("198.51.100.5", "10.0.0.2")) == "198.51.100.5"
