"""The HTTPS client the server posts to the outside with (push services, alert webhooks):
the system's CA store, never a redirect."""

from __future__ import annotations

import ssl
from typing import Any

import requests


def system_ca() -> str | bool:
    """Where the system keeps its trusted CAs (OpenSSL's default file or directory, which
    SSL_CERT_FILE / SSL_CERT_DIR move); True (requests' own bundle) if there is none."""
    paths = ssl.get_default_verify_paths()
    return paths.cafile or paths.capath or True


class OutboundSession(requests.Session):
    """requests, with two differences:

    - certificates are checked against the system's CA store rather than requests' bundled
      one, and REQUESTS_CA_BUNDLE (read at each request, as requests does) replaces it, so a
      deployment or a test can trust its own service;
    - redirects are not followed: the allowed host answers, and nothing it points to (the
      SSRF guard, config/allowed_hosts.py, checked the host).
    """

    def __init__(self) -> None:
        super().__init__()
        self.verify = system_ca()

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["allow_redirects"] = False
        return super().request(method, url, *args, **kwargs)
