"""The OpenAPI schema lists every status an operation answers (SPEC 3): a client generated
from it (openapi-python-client, say) parses only the statuses it declares and returns None
for the others.

ANSWERS is what each view answers; the test calls the views until it has seen every status
there (so the table cannot promise what a view never says), then checks each against what
/api/schema/ declares for that operation. The other way round, every success and 409 the
schema declares must have been seen. Errors every operation shares (403, 429, 503, and
413/415 with a body) are declared by config/schema.py; of those only 403 is provoked here (an
unknown token: session authentication comes first, so DRF answers 403, never 401).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from config import timestamps
from notifications.services import publish
from push import keys
from shifts.models import Handover
from subscriptions.models import MessageType, Subscription, Warehouse
from tests.handovers import end_shift

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "/api/v1/notifications/{notification_id}/"
HANDOVER = "/api/v1/handovers/{handover_id}/"
PUSH = "/api/v1/push/subscriptions/"

# (method, path in the schema) -> every status the view answers (beside 429, 503 and
# 413/415, which every operation may give and are not provoked here).
ANSWERS: dict[tuple[str, str], set[int]] = {
    ("post", NOTE + "claim/"): {200, 400, 403, 404, 409},
    ("post", NOTE + "release/"): {200, 400, 403, 404, 409},
    ("post", NOTE + "resolve/"): {200, 400, 403, 404},
    ("post", NOTE + "snooze/"): {200, 400, 403, 404, 409},
    ("delete", NOTE + "snooze/"): {200, 400, 403, 404},
    ("get", NOTE + "history/"): {200, 400, 403, 404},
    ("get", "/api/v1/notifications/snoozed/"): {200, 400, 403},
    ("get", "/api/v1/handovers/"): {200, 400, 403, 404},
    ("get", HANDOVER): {200, 403, 404},
    ("post", HANDOVER + "accept/"): {200, 403, 404, 409},
    ("get", "/api/v1/shifts/on-now/"): {200, 400, 403, 404},
    ("get", "/api/v1/push/key/"): {200, 403},
    ("get", "/api/v1/push/csrf/"): {200, 403},
    ("post", PUSH): {200, 201, 400, 403, 409},
    ("delete", PUSH): {204, 400, 403, 404},
}
# What a schema declares that the view must then really answer: its successes and conflicts.
OWN = {200, 201, 204, 409}


def declared(staff: User) -> dict[tuple[str, str], set[int]]:
    """(method, path) -> the statuses /api/schema/ lists for that operation."""
    client = APIClient()
    client.force_authenticate(staff)
    answer = client.get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200
    schema = answer.json()
    return {
        (method, path): {int(status) for status in operation["responses"]}
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    }


def browser_keys() -> dict[str, str]:
    public = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    )
    return {"p256dh": keys.b64url(public), "auth": keys.b64url(b"\x01" * 16)}


class Caller:
    """Calls operations and notes each status it got, per operation."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], set[int]] = defaultdict(set)

    def __call__(
        self, client: APIClient, method: str, template: str, *, data: Any = None, **ids: Any
    ) -> int:
        path = template.format(**ids)
        send: Callable[..., Any] = getattr(client, method)
        if method in ("get",):
            answer = send(path, data)
        elif method == "delete" and "{notification_id}" in template:
            answer = send(f"{path}?warehouse={data['warehouse']}" if data else path)
        else:
            answer = send(path, data, format="json")
        self.seen[(method, template)].add(answer.status_code)
        return int(answer.status_code)


@pytest.fixture
def floor(warehouse: Warehouse, role: Group, rep_notice: MessageType, make_user) -> dict:
    """alice and bob in Replenishment (SH01, receives REP_NOTICE, a shift that ended a minute
    ago and handed over); olga outside; staff."""
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    people = {
        "alice": make_user("alice", role),
        "bob": make_user("bob", role),
        "olga": make_user("olga"),
        "staff": User.objects.create_superuser("boss", "boss@example.com", "pw"),
    }
    end_shift(warehouse, role)
    return people


def test_the_schema_lists_every_status_the_views_answer(floor, warehouse, role):
    call = Caller()
    client: dict[str, APIClient] = {}
    for name in ("alice", "bob", "olga"):
        client[name] = APIClient()
        client[name].force_authenticate(floor[name])
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    alice, bob, olga = (client[n] for n in ("alice", "bob", "olga"))
    wid = warehouse.pk
    body = {"warehouse": wid}

    def alert(title: str) -> str:
        return publish(message_type="REP_NOTICE", warehouse=wid, title=title).id

    # The lifecycle.
    a, b, c = alert("a"), alert("b"), alert("c")
    for method, op in (("post", "claim/"), ("post", "release/"), ("post", "resolve/")):
        call(stranger, method, NOTE + op, data=body, notification_id=a)
        call(alice, method, NOTE + op, data={}, notification_id=a)  # no warehouse
        call(olga, method, NOTE + op, data=body, notification_id=a)  # not hers to see
    call(alice, "post", NOTE + "claim/", data=body, notification_id=a)
    call(bob, "post", NOTE + "claim/", data=body, notification_id=a)  # alice has it
    call(bob, "post", NOTE + "release/", data=body, notification_id=a)  # not his claim
    call(alice, "post", NOTE + "release/", data=body, notification_id=a)
    call(alice, "post", NOTE + "resolve/", data=body, notification_id=b)
    call(alice, "post", NOTE + "claim/", data=body, notification_id=b)  # resolved
    call(alice, "post", NOTE + "release/", data=body, notification_id=b)  # resolved

    later = (timestamps.now() + dt.timedelta(hours=1)).isoformat()
    snooze = NOTE + "snooze/"
    call(stranger, "post", snooze, data={**body, "until": later}, notification_id=c)
    call(olga, "post", snooze, data={**body, "until": later}, notification_id=c)
    call(alice, "post", snooze, data={**body, "until": "yesterday"}, notification_id=c)
    call(alice, "post", snooze, data={**body, "until": later}, notification_id=c)
    call(alice, "post", snooze, data={**body, "until": later}, notification_id=b)  # resolved
    call(stranger, "delete", snooze, data=body, notification_id=c)
    call(olga, "delete", snooze, data=body, notification_id=c)
    call(alice, "delete", snooze, data={"warehouse": "x"}, notification_id=c)
    call(alice, "delete", snooze, data=body, notification_id=c)

    history = NOTE + "history/"
    call(stranger, "get", history, data=body, notification_id=a)
    call(alice, "get", history, data={}, notification_id=a)
    call(olga, "get", history, data=body, notification_id=a)
    call(alice, "get", history, data=body, notification_id=a)

    snoozed = "/api/v1/notifications/snoozed/"
    call(stranger, "get", snoozed, data=body)
    call(alice, "get", snoozed, data={})
    call(alice, "get", snoozed, data=body)

    # Handovers.
    handover = Handover.objects.get()
    listing = "/api/v1/handovers/"
    call(stranger, "get", listing, data=body)
    call(alice, "get", listing, data={})
    call(alice, "get", listing, data={**body, "role": Group.objects.create(name="Other").pk})
    call(alice, "get", listing, data={**body, "role": role.pk})
    call(stranger, "get", HANDOVER, handover_id=handover.pk)
    call(olga, "get", HANDOVER, handover_id=handover.pk)
    call(alice, "get", HANDOVER, handover_id=handover.pk)
    accept = HANDOVER + "accept/"
    call(stranger, "post", accept, data={}, handover_id=handover.pk)
    call(olga, "post", accept, data={}, handover_id=handover.pk)
    call(alice, "post", accept, data={}, handover_id=handover.pk)
    call(bob, "post", accept, data={}, handover_id=handover.pk)  # alice was first
    on_now = "/api/v1/shifts/on-now/"
    call(stranger, "get", on_now, data=body)
    call(alice, "get", on_now, data={})
    call(olga, "get", on_now, data=body)
    call(alice, "get", on_now, data=body)

    # Web Push.
    for path in ("/api/v1/push/key/", "/api/v1/push/csrf/"):
        call(stranger, "get", path)
        call(alice, "get", path)
    browser = {
        "endpoint": "https://fcm.googleapis.com/fcm/send/schema-test",
        "keys": browser_keys(),
        "warehouses": [wid],
    }
    call(stranger, "post", PUSH, data=browser)
    call(alice, "post", PUSH, data={**browser, "endpoint": "https://evil.example/x"})
    call(alice, "post", PUSH, data=browser)
    call(alice, "post", PUSH, data=browser)  # stored already
    call(bob, "post", PUSH, data={**browser, "keys": browser_keys()})  # alice's, other keys
    call(bob, "delete", PUSH, data={"endpoint": browser["endpoint"]})  # alice's
    call(stranger, "delete", PUSH, data={"endpoint": browser["endpoint"]})
    call(alice, "delete", PUSH, data={})
    call(alice, "delete", PUSH, data={"endpoint": browser["endpoint"]})

    schema = declared(floor["staff"])
    assert {op: call.seen[op] for op in ANSWERS} == ANSWERS, "the table says what views answer"
    missing = {op: sorted(ANSWERS[op] - schema.get(op, set())) for op in ANSWERS}
    assert {op: s for op, s in missing.items() if s} == {}, "statuses the schema leaves out"
    promised = {op: sorted((schema.get(op, set()) & OWN) - ANSWERS[op]) for op in ANSWERS}
    assert {op: s for op, s in promised.items() if s} == {}, "statuses no view answers"
