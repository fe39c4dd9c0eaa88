"""A stream whose hub fails while it replays never says `ready` past what it did not send
(SPEC 11: replay loses nothing)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from config.asgi import stream_application
from config.redis import get_redis
from notifications.services import publish
from stream import app as stream_app
from tests.stream.conftest import EventStream
from tests.waiting import eventually

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.single_redis]


def notify(warehouse, title: str):
    return publish(message_type="REP_NOTICE", warehouse=warehouse, title=title)


def events_of(stream_client, headers: dict[str, str], warehouse) -> list:
    """Every event of one stream until the server ends it or it is ready and caught up."""
    with stream_client.stream(
        "GET", "/api/v1/stream/", params={"warehouse": warehouse.pk}, headers=headers
    ) as response:
        assert response.status_code == 200
        stream = EventStream(response)
        seen = []
        while (event := stream.next()) is not None:
            seen.append(event)
            if event.event in ("ready", "reset"):
                break
        return seen


def test_a_reconnect_while_the_hub_fails_replays_everything_or_says_nothing(
    stream_client, token_for, subscribed, warehouse, rep_notice, monkeypatch
):
    rita = subscribed("rita", warehouse, rep_notice)
    seen_before = notify(warehouse, "seen before")
    missed = [notify(warehouse, f"missed {i}") for i in range(4)]
    replay_page = stream_app._replay_page

    def hub_fails_first(user: User, warehouse_id: int, since: int, first: bool = False):
        # The hub loses its subscription after the stream registered, before it replays (a
        # Redis blip; an event the hub could not read did the same before).
        if first:
            get_redis().client_kill_filter(_type="pubsub")
            assert eventually(lambda: stream_application.hub.streams == 0)
        return replay_page(user, warehouse_id, since, first)

    monkeypatch.setattr(stream_app, "_replay_page", hub_fails_first)
    headers = {**token_for(rita), "Last-Event-ID": str(seen_before.cursor)}
    during = events_of(stream_client, headers, warehouse)

    sent = {int(e.id) for e in during if e.event == "notification"}
    for ready in (e for e in during if e.event == "ready"):
        # Whatever `ready` says was sent, was sent.
        assert {n.cursor for n in missed if n.cursor <= int(ready.id)} <= sent
    # The client reconnects from the last id it received and gets the rest.
    monkeypatch.setattr(stream_app, "_replay_page", replay_page)
    last = max(sent, default=seen_before.cursor)
    after = events_of(stream_client, {**token_for(rita), "Last-Event-ID": str(last)}, warehouse)
    replayed = [json.loads(e.data)["id"] for e in after if e.event == "notification"]
    assert after[-1].event == "ready"
    assert sorted(sent) + [int(e.id) for e in after if e.event == "notification"] == [
        n.cursor for n in missed
    ]
    assert set(replayed) <= {n.id for n in missed}
