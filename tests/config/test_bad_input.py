"""Bad input of any shape is a JSON 400 (or 413), never a 500 or an HTML page, and writes nothing.

SPEC section 10: NaN or Infinity in `data`, JSON nested deeper than a few levels, bodies of
megabytes, non-UTF-8 bytes; for JSON and XML bodies alike; through the API, `publish()` and rules.
"""

from __future__ import annotations

import io
import json

import pytest

from config import jsonvalues
from config.http_errors import RequestTooLarge
from config.parsers import JSONParser, XMLParser
from messaging import services
from notifications.services import PublishError, publish

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = 100_000


@pytest.fixture
def publisher_client(client_for, publisher):
    return client_for(publisher)


def assert_json_error(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def publish_body(warehouse, data_text: str) -> str:
    head = f'"message_type": "REP_NOTICE", "warehouse": {warehouse.pk}, "title": "Ratio"'
    return "{" + head + ', "data": ' + data_text + "}"


@pytest.mark.parametrize(
    "data_text",
    [
        '{"ratio": NaN}',
        '{"ratio": Infinity}',
        '{"ratio": -Infinity}',
        '{"ratio": 1e999}',
        '{"nested": [1, {"ratio": -1e999}]}',
    ],
)
def test_nan_and_infinity_in_data_are_refused_and_nothing_is_written(
    publisher_client, warehouse, subscribed, redis, data_text
):
    response = publisher_client.post(
        "/api/v1/notifications/",
        publish_body(warehouse, data_text),
        content_type="application/json",
    )

    body = assert_json_error(response)
    assert "NaN" in json.dumps(body) or "Infinity" in json.dumps(body)
    assert redis.keys("wms:{wh:*}:notes") == []


def test_the_recipients_polls_keep_working(
    publisher_client, client_for, warehouse, subscribed, redis
):
    publisher_client.post(
        "/api/v1/notifications/",
        publish_body(warehouse, '{"ratio": 1e999}'),
        content_type="application/json",
    )

    poll = client_for(subscribed).get("/api/v1/notifications/", {"warehouse": warehouse.pk})

    assert poll.status_code == 200
    assert poll.json()["results"] == []


@pytest.mark.parametrize(
    "data",
    [
        {"ratio": float("nan")},
        {"ratio": float("inf")},
        {"rows": [{"ratio": -float("inf")}]},
        {"deep": json.loads("[" * 40 + "]" * 40)},
    ],
)
def test_publish_refuses_values_that_could_not_be_served(
    warehouse, rep_notice, subscribed, redis, data
):
    with pytest.raises(PublishError) as refused:
        publish(message_type=rep_notice, warehouse=warehouse, title="Ratio", data=data)

    assert refused.value.field == "data"
    assert redis.keys("wms:{wh:*}:notes") == []


@pytest.mark.parametrize("field", ["title", "body"])
def test_publish_refuses_text_that_is_not_unicode(warehouse, rep_notice, subscribed, field):
    content = {"title": "Replenish", "body": ""} | {field: "lone \ud800 surrogate"}

    with pytest.raises(PublishError) as refused:
        publish(message_type=rep_notice, warehouse=warehouse, **content)

    assert refused.value.field == field


@pytest.fixture
def every_json_post(alice, bob, client_for, publisher_client, warehouse):
    chat = services.chat_create_group(creator=alice, member_ids=[bob.pk], message="hi")
    mine = client_for(alice)
    return [
        (publisher_client, "/api/v1/notifications/"),
        (mine, "/api/v1/notifications/read/"),
        (mine, "/api/v1/chats/"),
        (mine, "/api/v1/chats/direct/"),
        (mine, f"/api/v1/chats/{chat.id}/messages/"),
        (mine, f"/api/v1/chats/{chat.id}/read/"),
        (mine, f"/api/v1/chats/{chat.id}/members/"),
    ]


def test_json_nested_100000_deep_is_400_on_every_json_endpoint(every_json_post, redis):
    before = redis.dbsize()
    for client, path in every_json_post:
        response = client.post(path, "[" * DEEP + "]" * DEEP, content_type="application/json")
        body = assert_json_error(response)
        assert "nest" in body["detail"], path
    assert redis.dbsize() == before


def test_json_nested_a_little_deeper_than_allowed_is_400(
    publisher_client, warehouse, subscribed, redis
):
    limit = jsonvalues.JSON_MAX_DEPTH
    too_deep = publish_body(warehouse, '{"x": %s}' % ("[" * limit + "]" * limit))
    fine = publish_body(warehouse, '{"x": %s}' % ("[" * 8 + "]" * 8))

    refused = publisher_client.post(
        "/api/v1/notifications/", too_deep, content_type="application/json"
    )
    accepted = publisher_client.post(
        "/api/v1/notifications/", fine, content_type="application/json"
    )

    assert_json_error(refused)
    assert accepted.status_code == 201, accepted.content


@pytest.mark.parametrize("content_type", ["application/json", "application/xml"])
def test_a_5_mb_body_is_a_json_413(publisher_client, warehouse, redis, content_type):
    if content_type == "application/json":
        big = publish_body(warehouse, json.dumps({"pad": "x" * 5_000_000}))
    else:
        big = "<root><title>%s</title></root>" % ("x" * 5_000_000)

    response = publisher_client.post("/api/v1/notifications/", big, content_type=content_type)

    body = assert_json_error(response, 413)
    assert "larger than the limit" in body["detail"]
    assert redis.keys("wms:{wh:*}:notes") == []


def test_a_5_mb_body_is_413_before_authentication(api_client):
    response = api_client.post("/api/v1/chats/", "x" * 5_000_000, content_type="application/json")

    assert_json_error(response, 413)


@pytest.mark.parametrize("parser", [JSONParser(), XMLParser()])
def test_parsers_stop_reading_at_the_limit_whatever_the_length_header_says(parser, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    stream = io.BytesIO(b"[" + b"1," * 10_000 + b"1]")

    with pytest.raises(RequestTooLarge):
        parser.parse(stream, parser.media_type, {})

    assert stream.tell() == 1001  # one byte past the limit, never the rest


@pytest.mark.parametrize("content_type", ["application/json", "application/xml"])
def test_bytes_that_are_not_utf8_are_a_json_400(publisher_client, warehouse, redis, content_type):
    if content_type == "application/json":
        raw = b'{"message_type": "REP_NOTICE", "title": "\xff\xfe"}'
    else:
        raw = b"<root><title>\xff\xfe</title></root>"

    response = publisher_client.post("/api/v1/notifications/", raw, content_type=content_type)

    assert_json_error(response)
    assert redis.keys("wms:{wh:*}:notes") == []


def test_xml_nested_100000_deep_is_400(client_for, subscribed, warehouse):
    deep = "<root>" + "<a>" * DEEP + "</a>" * DEEP + "</root>"

    response = client_for(subscribed).post(
        "/api/v1/notifications/read/", deep, content_type="application/xml"
    )

    assert "nest" in assert_json_error(response)["detail"]


def test_xml_nan_stays_text(client_for, subscribed, warehouse):
    parsed = XMLParser().parse(
        io.BytesIO(b"<root><a>NaN</a><b>Infinity</b><c>1.5</c></root>"), "application/xml", {}
    )

    assert parsed == {"a": "NaN", "b": "Infinity", "c": pytest.approx(1.5)}
