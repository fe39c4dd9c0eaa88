"""The schema declares each error answer of the floor as it is given (SPEC 3 and 14, issue 39
row H): every error status /api/schema/ documents for the operations the floor uses is
triggered here for real, and each answer is validated against the schema by openapi-core (its
status documented, its content type, its body's shape), as a client generated from the schema
would parse it. A 409 of a press with `field` and no `claimed_by`, a roster refusal under
`?format=csv`, or a documented status no request can provoke fails here.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.http import QueryDict
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from rest_framework.test import APIClient

from actions.models import AlertAction
from config import timestamps
from config.throttling import UserRateThrottle
from notifications.services import publish
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "/api/v1/notifications/{notification_id}/"
CHAT = "/api/v1/chats/{chat_id}/"
NOTICE = "/api/v1/notices/{notice_id}/"
# The operations the floor uses (the page, the handheld, WMS clients polling).
FLOOR: list[tuple[str, str]] = [
    ("get", "/api/v1/notifications/"),
    ("get", "/api/v1/notifications/unread/"),
    ("post", NOTE + "claim/"),
    ("post", NOTE + "release/"),
    ("post", NOTE + "resolve/"),
    ("post", NOTE + "snooze/"),
    ("delete", NOTE + "snooze/"),
    ("post", NOTE + "actions/{code}/"),
    ("post", NOTICE + "ack/"),
    ("get", NOTICE + "roster/"),
    ("get", "/api/v1/chats/"),
    ("post", "/api/v1/chats/"),
    ("post", "/api/v1/chats/direct/"),
    ("get", "/api/v1/chats/pending/"),
    ("post", "/api/v1/chats/pending/"),
    ("get", CHAT),
    ("get", CHAT + "messages/"),
    ("post", CHAT + "messages/"),
    ("post", CHAT + "read/"),
    ("post", CHAT + "members/"),
    ("post", CHAT + "leave/"),
    ("get", "/api/v1/contacts/"),
]
WITH_BODY = {"post"}
TOO_MANY_FIELDS = "&".join(["x=1"] * 1001)  # over DATA_UPLOAD_MAX_NUMBER_FIELDS: 400


def nullable_refs(node: Any) -> Any:
    """The schema with drf-spectacular's nullable reference, `{"allOf": [ref], "nullable":
    true}`, read as generated clients read it (the reference, or null): openapi-core follows
    OpenAPI 3.0.3 to the letter, where `nullable` beside `allOf` does not admit null."""
    if isinstance(node, list):
        return [nullable_refs(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: nullable_refs(value) for key, value in node.items()}
    if node.get("nullable") and "allOf" in node and "type" not in node:
        rest = {k: v for k, v in node.items() if k not in ("allOf", "nullable")}
        return {**rest, "anyOf": [*node["allOf"], {"enum": [None]}]}
    return node


def _text(body: bytes, **parameters: str) -> str:
    return body.decode(parameters.get("charset", "utf-8"))


class Checker:
    """Sends requests and validates each answer against the schema, noting the statuses met
    per operation (and the kinds of 409 body met)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        # The roster's CSV (and its errors under ?format=csv) is text, as a client reads it.
        text: dict[str, Callable[[bytes], Any]] = {"text/csv": _text}
        self.openapi = OpenAPI.from_dict(
            nullable_refs(schema), config=Config(extra_media_type_deserializers=text)
        )
        self.schema = schema
        self.seen: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.bodies: dict[tuple[str, str, int], list[Any]] = defaultdict(list)

    def __call__(
        self,
        client: APIClient,
        method: str,
        template: str,
        status: int,
        *,
        data: Any = None,
        query: str = "",
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        **ids: Any,
    ) -> Any:
        path = template.format(**ids) + (f"?{query}" if query else "")
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in (headers or {}).items()}
        send = getattr(client, method)
        if content_type is not None:
            answer = send(path, data, content_type=content_type, **extra)
        elif method in WITH_BODY:
            answer = send(path, data if data is not None else {}, format="json", **extra)
        else:
            answer = send(path, **extra)
        assert answer.status_code == status, (method, path, answer.status_code, answer.content)
        # openapi-core reads the request's query and body too; only the answer is checked here,
        # and a request refused for its size would refuse to be read again.
        request = answer.wsgi_request
        if query == TOO_MANY_FIELDS:
            request.GET = QueryDict()
        if not hasattr(request, "_body"):
            request._body = b""
        result = self.openapi.unmarshal_response(
            DjangoOpenAPIRequest(request), DjangoOpenAPIResponse(answer)
        )
        assert not result.errors, (
            method,
            template,
            status,
            answer.content,
            [getattr(e.__cause__, "schema_errors", e) for e in result.errors],
        )
        if status in (429, 503):
            assert int(answer["Retry-After"]) > 0
        self.seen[(method, template)].add(status)
        self.bodies[(method, template, status)].append(answer.content)
        return answer

    def documented_errors(self, method: str, template: str) -> set[int]:
        operation = self.schema["paths"][template][method]
        return {int(code) for code in operation["responses"] if code[0] in "45"}


@pytest.fixture
def people(warehouse: Warehouse, role: Group, rep_notice: MessageType, make_user) -> dict:
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return {
        "alice": make_user("alice", role),
        "bob": make_user("bob", role),
        "olga": make_user("olga"),
        "staff": User.objects.create_superuser("boss", "boss@example.com", "pw"),
    }


@pytest.fixture
def check(people) -> Checker:
    client = APIClient()
    client.force_authenticate(people["staff"])
    answer = client.get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200
    return Checker(answer.json())


def _as(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def floor(people: dict, warehouse: Warehouse, rep_notice: MessageType, role: Group) -> dict:
    """Five alerts (a to e) whose action asks to scan their bin, a chat of alice and bob,
    a notice to the role; the ids of each operation's path."""
    wid = warehouse.pk
    alice, staff = _as(people["alice"]), _as(people["staff"])
    AlertAction.objects.create(
        message_type=rep_notice,
        code="refill",
        label="Bin refilled",
        url="https://wms.example/hook",
        confirm_field="bin",
    )

    def alert(title: str) -> str:
        return publish(
            message_type="REP_NOTICE", warehouse=wid, title=title, data={"bin": "A-01"}
        ).id

    a, b, c, d, e = alert("a"), alert("b"), alert("c"), alert("d"), alert("e")
    chat = alice.post(
        "/api/v1/chats/", {"members": [people["bob"].pk], "message": "hi"}, format="json"
    ).json()["id"]
    notice = staff.post(
        "/api/v1/notices/",
        {"warehouse": wid, "title": "Lane B closed", "body": "Use lane C.", "roles": [role.pk]},
        format="json",
    ).json()["id"]
    return {
        "alerts": (a, b, c, d, e),
        "ids": {"notification_id": a, "code": "refill", "chat_id": chat, "notice_id": notice},
    }


def test_every_documented_error_of_the_floor_is_answered_as_the_schema_says(
    check: Checker, people: dict, floor: dict, warehouse: Warehouse
):
    alice, bob, olga = (_as(people[n]) for n in ("alice", "bob", "olga"))
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    wid = warehouse.pk
    body = {"warehouse": wid}
    a, b, c, d, e = floor["alerts"]
    ids = floor["ids"]
    chat, notice = ids["chat_id"], ids["notice_id"]
    missing = "0" * 26

    # What every floor operation may answer: bad input, not signed in, too big, not JSON.
    for method, template in FLOOR:
        check(alice, method, template, 400, query=TOO_MANY_FIELDS, **ids)
        check(stranger, method, template, 403, **ids)
        if method in WITH_BODY:
            big = '{"body": "' + "x" * (3 * 1024 * 1024) + '"}'
            check(alice, method, template, 413, data=big, content_type="application/json", **ids)
        if "requestBody" in check.schema["paths"][template][method]:
            check(alice, method, template, 415, data="hello", content_type="text/plain", **ids)

    # Not found: an alert, a chat, a notice that is not there (or not yours).
    later = (timestamps.now() + dt.timedelta(hours=1)).isoformat()
    for op in ("claim/", "release/", "resolve/", "snooze/"):
        check(alice, "post", NOTE + op, 404, data={**body, "until": later}, notification_id=missing)
    check(alice, "delete", NOTE + "snooze/", 404, query=f"warehouse={wid}", notification_id=missing)
    check(alice, "post", NOTE + "actions/{code}/", 404, data=body, **{**ids, "code": "nope"})
    for method, template in FLOOR:
        if "{chat_id}" in template:
            # an active user as the new member: only the chat is not found
            data = {
                "body": "x",
                "up_to": 1,
                "user": people["olga"].pk,
            }  # an active user: only 404 is left
            check(olga, method, template, 404, data=data, **ids)
    check(olga, "post", NOTICE + "ack/", 404, data={"version": 1}, notice_id=notice)
    check(olga, "get", NOTICE + "roster/", 404, notice_id=notice)
    check(olga, "get", NOTICE + "roster/", 404, query="format=csv", notice_id=notice)
    check(alice, "get", "/api/v1/notifications/", 404, query=f"warehouse={wid}&format=nope")
    check(alice, "get", "/api/v1/notifications/unread/", 404, query=f"warehouse={wid}&format=no")

    # Refused: the roster is for staff and the escalation role; only the claimer releases.
    check(alice, "get", NOTICE + "roster/", 403, notice_id=notice)
    csv = check(alice, "get", NOTICE + "roster/", 403, query="format=csv", notice_id=notice)
    assert csv["Content-Type"].startswith("text/csv")
    check(alice, "post", NOTE + "claim/", 200, data=body, notification_id=a)
    check(bob, "post", NOTE + "release/", 403, data=body, notification_id=a)

    # Conflicts.
    press = NOTE + "actions/{code}/"
    check(bob, "post", NOTE + "claim/", 409, data=body, notification_id=a)
    check(bob, "post", press, 409, data={**body, "scan": "A-01"}, **ids)  # alice holds it
    check(alice, "post", press, 409, data={**body, "scan": "B-02"}, **{**ids, "notification_id": b})
    check(alice, "post", NOTE + "resolve/", 200, data=body, notification_id=c)
    check(alice, "post", NOTE + "release/", 409, data=body, notification_id=c)
    check(alice, "post", press, 409, data={**body, "scan": "A-01"}, **{**ids, "notification_id": c})
    check(alice, "post", NOTE + "snooze/", 409, data={**body, "until": later}, notification_id=c)
    check(alice, "post", NOTICE + "ack/", 409, data={"version": 7}, notice_id=notice)
    conflicts = check.bodies[("post", press, 409)]
    assert [sorted(json.loads(c)) for c in conflicts] == [
        ["claimed_by", "detail"],
        ["detail", "field"],
        ["claimed_by", "detail"],
    ]

    # An Idempotency-Key sent again with another request.
    for op in ("claim/", "release/", "resolve/"):
        key = {"Idempotency-Key": f"key-{op[:-1]}-0000000001"}
        alice.post((NOTE + op).format(notification_id=d), body, format="json", headers=key)
        check(alice, "post", NOTE + op, 422, data=body, headers=key, notification_id=b)
    key = {"Idempotency-Key": "key-press-00000000001"}
    pressed = alice.post(press.format(**{**ids, "notification_id": e}), {**body, "scan": "a-01 "},
                         format="json", headers=key)  # fmt: skip
    assert pressed.status_code == 202, pressed.content
    check(
        alice, "post", press, 422, data={**body, "scan": "A-01"}, headers=key,
        **{**ids, "notification_id": b},
    )  # fmt: skip
    check(
        alice, "post", CHAT + "messages/", 201, data={"body": "one"},
        headers={"Idempotency-Key": "key-chat-000000000001"}, chat_id=chat,
    )  # fmt: skip
    check(
        alice, "post", CHAT + "messages/", 422, data={"body": "two"},
        headers={"Idempotency-Key": "key-chat-000000000001"}, chat_id=chat,
    )  # fmt: skip

    # Throttled: every operation, once the rate is used up.
    UserRateThrottle.forget_all()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(UserRateThrottle, "rate", "0/min", raising=False)
        for method, template in FLOOR:
            check(alice, method, template, 429, **ids)
    UserRateThrottle.forget_all()

    _assert_every_documented_error_met(check, but={503})


def test_with_redis_down_the_floor_answers_503_as_the_schema_says(
    check: Checker, people: dict, floor: dict, warehouse: Warehouse, redis_down
):
    alice = _as(people["alice"])
    payload = {
        "warehouse": warehouse.pk, "body": "x", "up_to": 1, "user": people["bob"].pk, "version": 1,
        "scan": "A-01", "until": "next_shift", "members": [people["bob"].pk], "message": "x",
    }  # fmt: skip
    for method, template in FLOOR:
        query = f"warehouse={warehouse.pk}" if method in ("get", "delete") else ""
        check(alice, method, template, 503, data=payload, query=query, **floor["ids"])
    for method, template in FLOOR:
        assert 503 in check.documented_errors(method, template), (method, template)


def _assert_every_documented_error_met(check: Checker, *, but: set[int]) -> None:
    unmet = {}
    for method, template in FLOOR:
        documented = check.documented_errors(method, template) - but
        met = {s for s in check.seen[(method, template)] if s >= 400}
        if documented - met:
            unmet[(method, template)] = sorted(documented - met)
    assert unmet == {}, "documented errors that no request here provoked"
