"""The notification data rows 1-5 and 8 poll and mark: made with `publish()`, as in production.

Warehouse BN01 and six message types. T0 has `small` notifications, T1-T5 `big / 5` each:

- `small_user` subscribes to T0: an own inbox of `small` (20).
- `big_user` subscribes to T1-T5 directly: an own inbox of `big` (10,000).
- `role_user` subscribes to T1 directly and holds roles R2-R5, which subscribe to T2-T5: own
  inbox and four role inboxes, `big` visible in all.
- per round, one mark user subscribed to T1 (`big / 5` unread) and one to T1-T5 (`big`).

Every notification is unread for all of them. Polls send `since` = the newest cursor, as the
warehouse page does between changes (nothing new: the cost of a poll that returns nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.context import Bench, make_users, subscribe, sync_subscriptions, token_for

CONTENT: dict[str, Any] = {
    "title": "Replenish A-01-03",
    "body": "Stock is -12 after wave 8812",
    "data": {"bin": "A-01-03", "qty": -12},
}
TTL_SECONDS = 7 * 24 * 3600


@dataclass
class Poller:
    """A user who polls: their token and the newest cursor they have seen."""

    name: str
    user: Any
    token: str
    visible: int
    since: int = 0


@dataclass
class InboxData:
    warehouse_id: int
    small: Poller
    big: Poller
    role: Poller
    mark_small: list[Poller] = field(default_factory=list)
    mark_big: list[Poller] = field(default_factory=list)

    def list_path(self, poller: Poller, *, since: int | None = None) -> str:
        since = poller.since if since is None else since
        return f"/api/v1/notifications/?warehouse={self.warehouse_id}&since={since}"

    def unread_path(self) -> str:
        return f"/api/v1/notifications/unread/?warehouse={self.warehouse_id}"

    def first_page_path(self) -> str:
        return f"/api/v1/notifications/?warehouse={self.warehouse_id}&limit=50"


def auth(token: str) -> dict[str, str]:
    """Headers of a token client (Django's test client takes them as `headers=`)."""
    return {"Authorization": f"Token {token}"}


def build(bench: Bench) -> InboxData:
    from django.contrib.auth.models import Group
    from django.test import Client

    from notifications.services import publish
    from subscriptions.models import MessageType, Warehouse

    config = bench.config
    per_type = config.big // 5
    warehouse = Warehouse.objects.create(code="BN01", name="Benchmark inboxes")
    types = [
        MessageType.objects.create(
            code=f"BENCH_T{i}", name=f"T{i}", default_ttl_seconds=TTL_SECONDS
        )
        for i in range(6)
    ]
    roles = [Group.objects.create(name=f"bench-R{i}") for i in range(2, 6)]
    small, big, role = make_users("bench-inbox-", 3)
    role.groups.add(*roles)
    mark_small = make_users("bench-mark-small-", config.rounds)
    mark_big = make_users("bench-mark-big-", config.rounds)

    subscribe(warehouse, types[0], [small])
    subscribe(warehouse, types[1], [big, role, *mark_small, *mark_big])
    for message_type, role_group in zip(types[2:], roles, strict=True):
        subscribe(warehouse, message_type, [big, *mark_big], [role_group])
    sync_subscriptions()

    bench.log(f"publishing {config.small + config.big:,} notifications into BN01")
    for _ in range(config.small):
        publish(message_type=types[0].code, warehouse=warehouse.pk, **CONTENT)
    for message_type in types[1:]:
        for _ in range(per_type):
            publish(message_type=message_type.code, warehouse=warehouse.pk, **CONTENT)

    data = InboxData(
        warehouse_id=warehouse.pk,
        small=Poller(f"own inbox of {config.small}", small, token_for(small), config.small),
        big=Poller(f"own inbox of {config.big:,}", big, token_for(big), config.big),
        role=Poller(f"own + 4 roles, {config.big:,} visible", role, token_for(role), config.big),
        mark_small=[Poller("mark", u, token_for(u), per_type) for u in mark_small],
        mark_big=[Poller("mark", u, token_for(u), config.big) for u in mark_big],
    )
    # Page through each poller's notifications by the API: the newest cursor is where a
    # client that has seen everything polls from; the count checks the data is what we think.
    client = Client()
    for poller in (data.small, data.big, data.role):
        seen, since = 0, 0
        while True:
            reply = client.get(
                data.list_path(poller, since=since) + "&limit=200", headers=auth(poller.token)
            )
            assert reply.status_code == 200, reply.content[:300]
            body = reply.json()
            seen += len(body["results"])
            if not body["results"]:
                break
            since = body["next_since"]
        assert seen == poller.visible, (poller.name, seen, poller.visible)
        poller.since = since
    return data
