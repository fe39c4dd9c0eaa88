"""The notifications REST API: shapes, authentication, permissions, validation, outages."""

import re

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db(transaction=True)

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
N_KEYS = {
    "id",
    "message_type",
    "warehouse",
    "title",
    "body",
    "data",
    "created_at",
    "expires_at",
    "read",
    "cursor",
    # The alert lifecycle (SPEC section 7)
    "severity",
    "status",
    "claimed_by",
    "claimed_at",
    "resolved_by",
    "resolved_at",
    "escalated_at",
    "key",
    "occurrences",
    "flapping",
    # My snooze (SPEC section 13)
    "snoozed_until",
    "actions",
    # A quiet floor (SPEC section 17)
    "silenced",
    "quiet",
}


@pytest.fixture
def rita_client(replenishers, client_for):
    return client_for(replenishers[0])


def test_list_shape_is_exact(rita_client, warehouse, send):
    sent = send(body="Stock is -12 after wave 8812", data={"bin": "A-01-03", "qty": -12})

    body = rita_client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()

    assert set(body) == {"results", "unread_count", "next_since", "has_more"}
    assert body["has_more"] is False
    (item,) = body["results"]
    assert set(item) == N_KEYS
    assert item["id"] == sent.id
    assert (item["message_type"], item["warehouse"], item["read"]) == (
        "REP_NOTICE",
        warehouse.pk,
        False,
    )
    assert item["data"] == {"bin": "A-01-03", "qty": -12}
    assert ISO_MS.match(item["created_at"])
    assert ISO_MS.match(item["expires_at"])
    assert body["next_since"] == item["cursor"]
    assert body["unread_count"] == 1
    assert (item["severity"], item["status"], item["occurrences"], item["key"]) == (
        "info",
        "open",
        1,
        None,
    )
    assert [item[k] for k in ("claimed_by", "claimed_at", "resolved_by", "resolved_at")] == [
        None
    ] * 4
    assert item["escalated_at"] is None


def test_next_since_is_the_cursor_sent_when_nothing_is_new(rita_client, warehouse, send):
    send()
    first = rita_client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()

    again = rita_client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk, "since": first["next_since"]}
    ).json()

    assert again["results"] == []
    assert again["next_since"] == first["next_since"]


def test_unread_and_read_endpoints(rita_client, warehouse, send):
    first, second = send(title="1"), send(title="2")

    unread = rita_client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()
    marked = rita_client.post(
        "/api/v1/notifications/read/", {"warehouse": warehouse.pk, "ids": [first.id]}, format="json"
    )
    marked_all = rita_client.post(
        "/api/v1/notifications/read/", {"warehouse": warehouse.pk, "all": True}, format="json"
    )

    assert unread["unread_count"] == 2
    assert [n["id"] for n in unread["latest"]] == [second.id, first.id]
    assert set(unread["latest"][0]) == N_KEYS
    assert marked.json() == {"marked": 1, "unread_count": 1}
    assert marked_all.json() == {"marked": 1, "unread_count": 0}


def test_publish_needs_the_permission(client_for, publisher, alice, warehouse, replenishers):
    payload = {
        "message_type": "REP_NOTICE",
        "warehouse": warehouse.pk,
        "title": "Replenish",
        "body": "now",
        "data": {"bin": "A-01"},
        "ttl_seconds": 600,
    }

    refused = client_for(alice).post("/api/v1/notifications/", payload, format="json")
    created = client_for(publisher).post("/api/v1/notifications/", payload, format="json")

    assert refused.status_code == 403
    assert created.status_code == 201
    assert set(created.json()) == {"id", "recipients", "created_at"}
    assert created.json()["recipients"] == 1
    assert ISO_MS.match(created.json()["created_at"])


@pytest.mark.parametrize(
    ("payload", "field", "text"),
    [
        ({"message_type": "NOPE"}, "message_type", "Unknown message type"),
        ({"warehouse": 999}, "warehouse", "Unknown warehouse"),
        ({"title": "t" * 201}, "title", "longer than 200"),
        ({"body": "b" * 4001}, "body", "longer than 4000"),
        ({"data": {"x": "y" * 9000}}, "data", "the limit is 8192"),
        ({"data": [1, 2]}, "data", "JSON object"),
        ({"ttl_seconds": -5}, "ttl_seconds", "whole number"),
        ({"title": ""}, "title", "blank"),
    ],
)
def test_publish_validation_errors_write_nothing(
    client_for, publisher, warehouse, replenishers, redis, payload, field, text
):
    base = {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "ok"}

    response = client_for(publisher).post(
        "/api/v1/notifications/", {**base, **payload}, format="json"
    )

    assert response.status_code == 400
    assert text in str(response.json()[field])
    assert redis.keys("wms:{wh:*}:notes") == []


@pytest.mark.parametrize(
    ("params", "field", "text"),
    [
        ({"warehouse": None}, "warehouse", "required"),
        ({"warehouse": "abc"}, "warehouse", "integer"),
        ({"warehouse": 999}, "warehouse", "Unknown or inactive warehouse 999."),
        ({"since": "yesterday"}, "since", "valid integer"),
        ({"since": -1}, "since", "greater than or equal to 0"),
        ({"limit": 0}, "limit", "greater than or equal to 1"),
        ({"limit": 201}, "limit", "less than or equal to 200"),
    ],
)
def test_list_validation_errors(rita_client, warehouse, params, field, text):
    query = {k: v for k, v in {"warehouse": warehouse.pk, **params}.items() if v is not None}
    response = rita_client.get("/api/v1/notifications/", query)

    assert response.status_code == 400
    assert text in str(response.json()[field])


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"all": False},
        {"ids": []},
        {"ids": ["x"], "all": True},
        {"ids": ["not-a-uuid"]},
        {"ids": ["00000000-0000-0000-0000-000000000000"] * 501},
    ],
)
def test_mark_read_validation_errors(rita_client, warehouse, payload):
    response = rita_client.post(
        "/api/v1/notifications/read/", {"warehouse": warehouse.pk, **payload}, format="json"
    )

    assert response.status_code == 400


@pytest.mark.parametrize("path", ["/api/v1/notifications/", "/api/v1/notifications/unread/"])
def test_anonymous_requests_are_refused(path, warehouse):
    response = APIClient().get(path, {"warehouse": warehouse.pk})

    assert response.status_code in (401, 403)


def test_token_authentication(replenishers, warehouse, send):
    send()
    token = Token.objects.create(user=replenishers[0])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")

    response = client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk})

    assert response.status_code == 200
    assert response.json()["unread_count"] == 1


def test_identity_comes_from_authentication_only(rita_client, alice, warehouse, send):
    send()
    # A client naming another user or subscriber changes nothing: those parameters do not exist.
    body = rita_client.get(
        "/api/v1/notifications/",
        {"warehouse": warehouse.pk, "user": alice.pk, "subscribers": f"u:{alice.pk}"},
    ).json()

    assert len(body["results"]) == 1


def test_xml_on_request(rita_client, warehouse, send):
    send(title="Replenish <A-01-03>")

    response = rita_client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk}, HTTP_ACCEPT="application/xml"
    )

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    assert "<title>Replenish &lt;A-01-03&gt;</title>" in response.content.decode()


@pytest.mark.parametrize(
    ("method", "path", "payload"),
    [
        ("get", "/api/v1/notifications/", {}),
        ("get", "/api/v1/notifications/unread/", {}),
        ("post", "/api/v1/notifications/read/", {"all": True}),
    ],
)
def test_redis_down_gives_503_with_retry_after(
    rita_client, warehouse, redis_down, method, path, payload
):
    call = getattr(rita_client, method)
    response = call(
        path,
        {"warehouse": warehouse.pk, **payload},
        **({"format": "json"} if method == "post" else {}),
    )

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
    assert "unavailable" in response.json()["detail"]


def test_publish_with_redis_down_gives_503(
    client_for, publisher, warehouse, replenishers, redis_down
):
    response = client_for(publisher).post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "x"},
        format="json",
    )

    assert response.status_code == 503


def test_openapi_schema_and_docs_are_served(client, alice):
    client.force_login(alice)
    schema = client.get("/api/schema/")
    docs = client.get("/api/docs/")

    assert schema.status_code == 200
    assert b"/api/v1/notifications/unread/" in schema.content
    assert docs.status_code == 200
