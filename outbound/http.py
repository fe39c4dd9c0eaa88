"""The HTTPS client the server posts to the outside with (push services, alert webhooks): the
system's CA store, never a redirect, one time limit for the whole request and a cap on how
much of the answer is read."""

from __future__ import annotations

import contextvars
import logging
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.ssl_ import create_urllib3_context

from outbound import deadline

logger = logging.getLogger(__name__)

# When the request being made in this thread must be over (time.monotonic()), or None.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "outbound_request_deadline", default=None
)
READ_CHUNK_BYTES = 8192
# A request's time limit when its caller gives none, and the most of an answer read.
DEFAULT_TIME_LIMIT_SECONDS = 10.0
MAX_RESPONSE_BYTES = 64 * 1024


def system_ca() -> str | bool:
    """Where the system keeps its trusted CAs (OpenSSL's default file or directory, which
    SSL_CERT_FILE / SSL_CERT_DIR move); True (requests' own bundle) if there is none."""
    paths = ssl.get_default_verify_paths()
    return paths.cafile or paths.capath or True


class TimeLimitPassed(TimeoutError):
    """The request's time limit passed. A socket timeout to urllib3 and requests, which
    report it as their own timeout errors."""


class _DeadlineSocket(ssl.SSLSocket):
    """A TLS socket whose every blocking call (handshake, send, read) waits only until the
    current request's deadline.

    A socket timeout starts again at every read, so a server sending one byte a second could
    hold a request for as long as it liked; here the time left shrinks with each call. Posts
    go to `https://` only (outbound/hosts.py), so every byte after the TCP connect,
    which has its own timeout, passes through this class.
    """

    def _wait_until_deadline(self) -> None:
        deadline = _deadline.get()
        if deadline is None:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeLimitPassed("the request's time limit passed")
        self.settimeout(left)

    def do_handshake(self, block: bool = False) -> None:
        self._wait_until_deadline()
        super().do_handshake(block)

    def read(self, len: int = 1024, buffer: Any = None) -> Any:
        # recv() and recv_into() read through here (the argument names are ssl's).
        self._wait_until_deadline()
        return super().read(len, buffer)

    def send(self, data: Any, flags: int = 0) -> int:
        # sendall() sends through here.
        self._wait_until_deadline()
        return super().send(data, flags)


class _DeadlineAdapter(HTTPAdapter):
    """requests' adapter, with TLS sockets that keep the request's deadline."""

    def __init__(self) -> None:
        # One context per trust setting: urllib3 loads the CA file into the context it is given.
        self._contexts: dict[tuple[object, ...], ssl.SSLContext] = {}
        super().__init__()

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        # requests' documented way to give a connection pool an SSLContext of one's own.
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        trust = tuple(pool_kwargs.get(k) for k in ("cert_reqs", "ca_certs", "ca_cert_dir"))
        context = self._contexts.get(trust)
        if context is None:
            context = create_urllib3_context()
            context.sslsocket_class = _DeadlineSocket
            self._contexts[trust] = context
        pool_kwargs["ssl_context"] = context
        return host_params, pool_kwargs


class OutboundSession(requests.Session):
    """requests, with these differences:

    - certificates are checked against the system's CA store rather than requests' bundled
      one, and REQUESTS_CA_BUNDLE (read at each request, as requests does) replaces it, so a
      deployment or a test can trust its own service;
    - redirects are not followed: the allowed host answers, and nothing it points to (the
      SSRF guard, outbound/hosts.py, checked the host);
    - the time limit (`time_limit`: the caller's `timeout`, or less when the deadline of the
      work in hand, outbound/deadline.py, comes first) covers the whole request (connect,
      TLS handshake, send, the answer's status, headers and body), not each read; when it
      passes before the status has come, the request fails with requests' timeout error, as
      one that got no answer;
    - at most `max_response_bytes()` of the answer's body are read: reading stops at the cap
      or at the time limit, the connection is then closed (not reused), and the status
      decides the outcome as usual (`response.content` holds what was read).
    """

    def __init__(self) -> None:
        super().__init__()
        self.verify = system_ca()
        self.mount("https://", _DeadlineAdapter())
        self.headers["Accept-Encoding"] = "identity"  # the cap counts the bytes that came

    def time_limit(self, asked: Any) -> float:
        """The whole request's time limit: the caller's `timeout` when it is one number."""
        return float(asked) if isinstance(asked, int | float) else DEFAULT_TIME_LIMIT_SECONDS

    def max_response_bytes(self) -> int:
        return MAX_RESPONSE_BYTES

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        limit = self.time_limit(kwargs.get("timeout"))
        outer = deadline.left()  # the work this request is part of (an outbox attempt)
        if outer is not None:
            limit = min(limit, max(outer, 0.001))
        kwargs.update(allow_redirects=False, stream=True, timeout=limit)
        token = _deadline.set(time.monotonic() + limit)
        try:
            response = super().request(method, url, *args, **kwargs)
            _read_answer(response, cap=self.max_response_bytes())
        finally:
            _deadline.reset(token)
        return response


def _read_answer(response: requests.Response, *, cap: int) -> None:
    """Read the answer's body into `response.content`, at most `cap` bytes of it, until the
    deadline at the latest; the rest is left unread and the connection closed."""
    host = urlsplit(response.url).hostname  # not the URL: a push endpoint's path is a secret
    body = bytearray()
    complete = False
    try:
        for chunk in response.raw.stream(READ_CHUNK_BYTES, decode_content=False):
            body += chunk
            if len(body) > cap:
                logger.info("%s: answer longer than %d bytes, cut there", host, cap)
                break
        else:
            complete = True
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        logger.info("%s: stopped reading the answer: %s", host, exc)
    if not complete:
        response.close()  # closes the connection: the unread rest never comes in
    # Where requests keeps a body it has read (Response.content reads it there).
    response._content = bytes(body[:cap])
    response._content_consumed = True
