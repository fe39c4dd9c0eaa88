"""What one poll costs Redis: the commands it runs, its script's own included (issue 41).

`INFO commandstats` counts every command a Lua script runs as well as the EVALSHA that runs
it, so the difference around one request is the poll's whole work on the server. The data is
the benchmark's shape (benchmarks/inbox_data.py), made with `publish()`: an own inbox of 20,
an own inbox of 10,000, and own + 4 roles with 10,000 visible; then a user with the same
roles who marked all read and has 20 new unread spread over their classes.

Goals: the unread summary in at most 12 commands whatever the inbox size and the number of
roles; a first page of 50 in at most 120.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Group

from notifications import services
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = [pytest.mark.single_redis, pytest.mark.django_db]

SUMMARY_MOST = 12
FIRST_PAGE_MOST = 120
BIG = 10_000
SMALL = 20


@dataclass
class Floor:
    warehouse: Warehouse
    users: dict[str, Any]  # what each one sees -> the user
    unread: dict[str, int]  # the same -> their unread count


def _commands(redis) -> Counter[str]:
    stats = redis.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): s["calls"] for name, s in stats.items()})


def _report(spent: dict[str, Counter[str]]) -> str:
    return "\n".join(
        f"{name}: {sum(c.values())} {dict(c.most_common())}" for name, c in spent.items()
    )


def commands_of(redis, call) -> tuple[Any, Counter[str]]:
    """`call()`'s answer and the commands the server ran for it (INFO's own left out)."""
    before = _commands(redis)
    answer = call()
    spent = _commands(redis) - before
    spent.pop("info", None)
    return answer, spent


def _publish(message_type: MessageType, warehouse: Warehouse, n: int) -> None:
    for i in range(n):
        services.publish(message_type=message_type, warehouse=warehouse, title=f"n{i}")


@pytest.fixture
def floor(db, make_user) -> Floor:
    """Own inbox of 20; own inbox of 10,000 (five types); own + 4 roles with 10,000 visible;
    the same roles, all read, then 20 new unread (4 in each of their 5 classes)."""
    warehouse = Warehouse.objects.create(code="FL01", name="Floor")
    types = [
        MessageType.objects.create(code=f"FLOOR_T{i}", name=f"T{i}", default_ttl_seconds=86_400)
        for i in range(6)
    ]
    roles = [Group.objects.create(name=f"floor-R{i}") for i in range(2, 6)]
    small = make_user("small")
    big = make_user("big")
    with_roles = make_user("with-roles", *roles)
    caught_up = make_user("caught-up", *roles)
    Subscription.objects.create(message_type=types[0], warehouse=warehouse, user=small)
    for user in (big, with_roles, caught_up):
        Subscription.objects.create(message_type=types[1], warehouse=warehouse, user=user)
    for message_type, role in zip(types[2:], roles, strict=True):
        Subscription.objects.create(message_type=message_type, warehouse=warehouse, user=big)
        Subscription.objects.create(message_type=message_type, warehouse=warehouse, role=role)
    _publish(types[0], warehouse, SMALL)
    for message_type in types[1:]:
        _publish(message_type, warehouse, BIG // 5)
    services.mark_read(user=caught_up, warehouse_id=warehouse.pk, ids=None)
    for message_type in types[1:]:
        _publish(message_type, warehouse, SMALL // 5)
    return Floor(
        warehouse,
        {
            "own inbox of 20": small,
            "own inbox of 10,000": big,
            "own + 4 roles, 10,000 visible": with_roles,
            "own + 4 roles, 20 unread": caught_up,
        },
        {
            "own inbox of 20": SMALL,
            "own inbox of 10,000": BIG + SMALL,  # the last 20 reach them too
            "own + 4 roles, 10,000 visible": BIG + SMALL,
            "own + 4 roles, 20 unread": SMALL,
        },
    )


def _get(client_for, user, path: str, **query):
    client = client_for(user)
    client.get(path, query)  # loads the scripts and warms the directory: not what is measured
    return lambda: client.get(path, query)


def test_an_unread_summary_runs_a_handful_of_commands_whatever_the_inbox(floor, redis, client_for):
    spent = {}
    for name, user in floor.users.items():
        poll = _get(client_for, user, "/api/v1/notifications/unread/", warehouse=floor.warehouse.pk)
        reply, commands = commands_of(redis, poll)
        assert reply.status_code == 200
        body = reply.json()
        assert body["unread_count"] == floor.unread[name], name
        assert len(body["latest"]) == 5, name
        spent[name] = commands
    assert all(sum(c.values()) <= SUMMARY_MOST for c in spent.values()), _report(spent)


def test_a_first_page_of_50_runs_at_most_120_commands(floor, redis, client_for):
    spent = {}
    for name, user in floor.users.items():
        poll = _get(
            client_for, user, "/api/v1/notifications/", warehouse=floor.warehouse.pk, limit=50
        )
        reply, commands = commands_of(redis, poll)
        assert reply.status_code == 200
        assert len(reply.json()["results"]) == min(50, floor.unread[name]), name
        spent[name] = commands
    assert all(sum(c.values()) <= FIRST_PAGE_MOST for c in spent.values()), _report(spent)
