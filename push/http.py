"""The HTTPS client that posts to push services: the system's CA store, never a redirect."""

from __future__ import annotations

import ssl
from typing import Any

import requests


def system_ca() -> str | bool:
    """Where the system keeps its trusted CAs (OpenSSL's default file or directory, which
    SSL_CERT_FILE / SSL_CERT_DIR move); True (requests' own bundle) if there is none."""
    paths = ssl.get_default_verify_paths()
    return paths.cafile or paths.capath or True


class PushSession(requests.Session):
    """requests, as pywebpush uses it, with two differences:

    - certificates are checked against the system's CA store rather than requests' bundled
      one, and REQUESTS_CA_BUNDLE (read at each request, as requests does) replaces it, so a
      deployment or a test can trust its own push service;
    - redirects are not followed: the allowed host answers, and nothing it points to.
    """

    def __init__(self) -> None:
        super().__init__()
        self.verify = system_ca()

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["allow_redirects"] = False
        return super().request(method, url, *args, **kwargs)
