"""Stream fixtures: the ASGI application under a real uvicorn server, and an SSE reader."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from subscriptions.models import MessageType, Subscription, Warehouse


@dataclass
class Event:
    event: str
    data: str = ""
    id: str | None = None
    comment: bool = False


@dataclass
class EventStream:
    """Reads Server-Sent Events from a streaming httpx response, one at a time."""

    response: httpx.Response
    lines: Iterator[str] = field(init=False)
    last_id: str | None = None
    # Events the server replayed before `ready` (filled in by the open_stream fixture).
    replayed: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = self.response.iter_lines()

    def next(self, *, comments: bool = False) -> Event | None:
        """The next event (None when the server ended the stream); read timeouts fail."""
        event = Event(event="message")
        has_data = False
        for line in self.lines:
            if line == "":
                if event.comment and comments:
                    return event
                if has_data:
                    if event.id is not None:
                        self.last_id = event.id
                    return event
                event = Event(event="message")
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "":
                event.comment = True
            elif name == "event":
                event.event = value
            elif name == "data":
                event.data, has_data = value, True
            elif name == "id":
                event.id = value
        return None

    def through(self, kind: str) -> list[Event]:
        """Every event up to and including the next `kind` one; the stream must not end first."""
        seen = []
        while True:
            event = self.next()
            assert event is not None, f"the stream ended before an {kind!r} event"
            seen.append(event)
            if event.event == kind:
                return seen

    def until(self, kind: str) -> Event:
        """The next `kind` event (the events before it are passed over)."""
        return self.through(kind)[-1]


@pytest.fixture
def stream_client(asgi_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=asgi_server, timeout=httpx.Timeout(10.0)) as client:
        yield client


@pytest.fixture
def token_for(transactional_db) -> Callable[[User], dict[str, str]]:
    def headers(user: User) -> dict[str, str]:
        token, _ = Token.objects.get_or_create(user=user)
        return {"Authorization": f"Token {token.key}"}

    return headers


@pytest.fixture
def session_cookie_for(transactional_db) -> Callable[[User], dict[str, str]]:
    def cookies(user: User) -> dict[str, str]:
        client = Client()
        client.force_login(user)
        name = django_settings.SESSION_COOKIE_NAME
        return {name: client.cookies[name].value}

    return cookies


@pytest.fixture
def open_stream(stream_client: httpx.Client, token_for) -> Iterator[Callable[..., EventStream]]:
    """open_stream(user, warehouse, since=None, last_event_id=None) -> an EventStream that
    has received its `ready` event (replayed notifications are in `replayed`)."""
    opened = []

    def open_(user: User, warehouse: Warehouse, **options) -> EventStream:
        headers = token_for(user)
        if options.get("last_event_id") is not None:
            headers["Last-Event-ID"] = str(options["last_event_id"])
        params = {"warehouse": warehouse.pk}
        if options.get("since") is not None:
            params["since"] = options["since"]
        context = stream_client.stream("GET", "/api/v1/stream/", params=params, headers=headers)
        response = context.__enter__()
        opened.append(context)
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"  # nginx passes each event on
        stream = EventStream(response)
        while True:
            event = stream.next()
            assert event is not None, "the stream ended before it was ready"
            if event.event == "ready":
                return stream
            stream.replayed.append(event)

    yield open_
    for context in opened:
        context.__exit__(None, None, None)


@pytest.fixture
def subscribed(transactional_db, make_user, role) -> Callable[..., User]:
    """subscribed(username, warehouse, message_type) -> a user whose role gets the type there."""

    def make(username: str, warehouse: Warehouse, message_type: MessageType) -> User:
        Subscription.objects.get_or_create(
            message_type=message_type, warehouse=warehouse, role=role
        )
        return make_user(username, role)

    return make
