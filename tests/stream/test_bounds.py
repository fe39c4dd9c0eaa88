"""Streams are bounded and follow access changes (SPEC section 11; issue 20, rows 3b-3d):
at most STREAM_MAX_PER_USER per user, a client that reads nothing is cut off after
STREAM_WRITE_TIMEOUT_SECONDS and its memory freed, and a revocation ends or narrows the
user's open streams within 5 s, under a real uvicorn server with real sockets."""

from __future__ import annotations

import gc
import socket
import time
import weakref

import pytest
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token

from config import asgi
from notifications.services import publish
from subscriptions.models import Subscription
from tests.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

REVOCATION_SECONDS = 5.0  # SPEC section 11


def streams_of(user) -> list:
    return asgi.stream_application.streams.of_user(user.pk)


def notify(warehouse, title="Replenish A-01-03", **kwargs):
    return publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, **kwargs)


def test_one_stream_too_many_closes_the_users_oldest(
    open_stream, subscribed, warehouse, rep_notice, settings
):
    settings.STREAM_MAX_PER_USER = 2
    rita = subscribed("rita", warehouse, rep_notice)
    first, second = open_stream(rita, warehouse), open_stream(rita, warehouse)

    third = open_stream(rita, warehouse)

    assert first.next() is None  # ended by the server
    result = notify(warehouse)
    assert second.until("notification").id == third.until("notification").id == str(result.cursor)
    assert len(streams_of(rita)) == 2


def test_a_deleted_token_ends_the_open_stream_within_seconds(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)
    started = time.monotonic()

    Token.objects.filter(user=rita).delete()

    assert stream.next() is None
    assert time.monotonic() - started < REVOCATION_SECONDS


def test_a_deactivated_user_loses_the_open_stream_within_seconds(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)
    started = time.monotonic()

    rita.is_active = False
    rita.save()

    assert stream.next() is None
    assert time.monotonic() - started < REVOCATION_SECONDS


def test_a_role_taken_away_narrows_the_open_stream_at_once(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=rita)
    role = rita.groups.get()
    stream = open_stream(rita, warehouse)
    listener = streams_of(rita)[0]

    rita.groups.remove(role)
    assert eventually(lambda: f"r:{role.pk}" not in listener.inboxes, timeout=REVOCATION_SECONDS)

    Subscription.objects.filter(user=rita).delete()
    only_role = notify(warehouse, "for the role only")
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=rita)
    mine = notify(warehouse, "for rita")
    assert stream.until("notification").id == str(mine.cursor)
    assert only_role.cursor < mine.cursor


def _never_reading_stream(
    url: str, token: str, warehouse_id: int, *, receive_buffer: int | None = 4096
) -> socket.socket:
    """A real client socket that sends its request and then reads nothing, by default with
    a small receive buffer so that the server's writes block soon (None: the system's)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect((host, int(port)))
    sock.sendall(
        f"GET /api/v1/stream/?warehouse={warehouse_id} HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Token {token}\r\n\r\n".encode()
    )
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Read what is buffered; True once the server has closed the connection."""
    sock.settimeout(5)
    try:
        while chunk := sock.recv(1 << 20):
            del chunk
    except (ConnectionResetError, TimeoutError):
        return False
    return True


def _flood_until(condition, warehouse) -> None:
    """Publish big notifications until `condition()` holds (the servers' buffers fill)."""
    body = "x" * 4000
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the streams' writes never blocked"
        for _ in range(20):
            notify(warehouse, body=body, data={"pad": "y" * 6000})


def test_streams_whose_clients_read_nothing_are_closed_and_freed(
    asgi_server, subscribed, warehouse, rep_notice, settings
):
    settings.STREAM_WRITE_TIMEOUT_SECONDS = 1.0
    settings.STREAM_QUEUE_LIMIT = 100_000  # the write timeout, not the queue, must end them
    rita = subscribed("rita", warehouse, rep_notice)
    token = Token.objects.create(user=rita).key
    sockets = [_never_reading_stream(asgi_server, token, warehouse.pk) for _ in range(3)]
    try:
        assert eventually(lambda: len(streams_of(rita)) == 3)
        listeners = [weakref.ref(listener) for listener in streams_of(rita)]

        _flood_until(lambda: not streams_of(rita), warehouse)

        assert all(_closed_by_server(sock) for sock in sockets)
        gc.collect()
        assert [ref() for ref in listeners] == [None, None, None]  # memory freed
    finally:
        for sock in sockets:
            sock.close()


def test_clients_with_the_systems_buffers_that_read_nothing_are_closed_too(
    asgi_server, subscribed, warehouse, rep_notice, settings
):
    """Issue 29, row H: the kernel's buffers on loopback absorb megabytes, so a client that
    reads nothing was closed only once they were full. A stream's socket buffers are bounded
    (STREAM_SEND_BUFFER_BYTES): 1.6 MB unread is enough to block its writes, and the write
    timeout then ends it."""
    settings.STREAM_WRITE_TIMEOUT_SECONDS = 1.0
    settings.STREAM_QUEUE_LIMIT = 100_000  # the write timeout, not the queue, must end them
    rita = subscribed("rita", warehouse, rep_notice)
    token = Token.objects.create(user=rita).key
    sockets = [
        _never_reading_stream(asgi_server, token, warehouse.pk, receive_buffer=None)
        for _ in range(2)
    ]
    try:
        assert eventually(lambda: len(streams_of(rita)) == 2)
        for _ in range(400):
            notify(warehouse, body="x" * 4000)

        assert eventually(lambda: not streams_of(rita), timeout=15)
        assert all(_closed_by_server(sock) for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()


def test_a_revocation_reaches_a_stream_blocked_in_a_write(
    asgi_server, subscribed, warehouse, rep_notice, settings
):
    """Issue 20, row 3d: a never-reading stream of a deleted token must not stay open."""
    settings.STREAM_WRITE_TIMEOUT_SECONDS = 600.0
    settings.STREAM_QUEUE_LIMIT = 100_000
    rita = subscribed("rita", warehouse, rep_notice)
    token = Token.objects.create(user=rita)
    sock = _never_reading_stream(asgi_server, token.key, warehouse.pk)
    try:
        assert eventually(lambda: len(streams_of(rita)) == 1)
        registry = asgi.stream_application.streams
        _flood_until(lambda: all(s.writer.writing for s in registry.open_of(rita.pk)), warehouse)
        started = time.monotonic()

        token.delete()

        assert eventually(lambda: not streams_of(rita), timeout=REVOCATION_SECONDS)
        assert time.monotonic() - started < REVOCATION_SECONDS
        assert _closed_by_server(sock)
    finally:
        sock.close()


def test_a_group_change_of_someone_else_leaves_streams_alone(
    open_stream, subscribed, warehouse, rep_notice
):
    rita = subscribed("rita", warehouse, rep_notice)
    stream = open_stream(rita, warehouse)
    Group.objects.create(name="Unrelated")
    result = notify(warehouse)
    assert stream.until("notification").id == str(result.cursor)
