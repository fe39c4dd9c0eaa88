"""The OpenAPI schema documents the error answers, so clients and the fuzz run know them."""

from __future__ import annotations

import pytest

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(autouse=True)
def public_schema(settings):
    """The schema as a site with API_DOCS_PUBLIC=1 serves it: no user, no database."""
    settings.API_DOCS_PUBLIC = True


@pytest.fixture
def paths(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]


def operations(paths):
    for path, item in paths.items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def test_every_operation_documents_400_403_429_and_503_and_never_401(paths):
    """Session authentication comes first, so DRF answers a missing or wrong token with 403:
    no operation answers 401 (tests/test_schema_errors.py sends a wrong token to each)."""
    for path, method, operation in operations(paths):
        responses = operation["responses"]
        assert {"400", "403", "429", "503"} <= set(responses), (method, path)
        assert "401" not in responses, (method, path)
        assert "Retry-After" in responses["503"]["headers"]


def test_404_where_there_is_something_to_find_and_413_where_there_is_a_body(paths):
    for path, method, operation in operations(paths):
        responses = operation["responses"]
        if "{" in path:
            assert "404" in responses, (method, path)
        if "requestBody" in operation or method in ("post", "put", "patch"):
            assert "413" in responses, (method, path)


def test_pending_is_documented_for_post_and_get(paths):
    assert {"get", "post"} <= set(paths["/api/v1/chats/pending/"])


def test_xml_errors_are_documented_where_xml_is_offered(paths):
    content = paths["/api/v1/notifications/"]["get"]["responses"]["400"]["content"]

    assert {"application/json", "application/xml"} <= set(content)


@pytest.fixture
def schema(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/json").json()


@pytest.mark.django_db  # N's `actions` come from the database (SPEC 14)
@pytest.mark.parametrize(
    ("path", "method", "status", "component"),
    [
        ("/api/v1/notifications/", "get", "200", "InboxPageOutput"),
        ("/api/v1/notifications/unread/", "get", "200", "UnreadOutput"),
        ("/api/v1/notifications/{notification_id}/claim/", "post", "200", "NotificationOutput"),
        ("/api/v1/notifications/{notification_id}/release/", "post", "200", "NotificationOutput"),
        ("/api/v1/notifications/{notification_id}/resolve/", "post", "200", "NotificationOutput"),
    ],
)
def test_hot_answers_are_documented_by_their_serializers(schema, path, method, status, component):
    """The list, unread and lifecycle answers are built as plain dicts (issue 22); the schema
    still describes them with the serializers, and their keys are the answers' keys."""
    from notifications.api import serializers as s
    from notifications.domain import InboxItem, InboxPage, Notification, UnreadSummary

    content = schema["paths"][path][method]["responses"][status]["content"]
    assert content["application/json"]["schema"] == {"$ref": f"#/components/schemas/{component}"}
    item = InboxItem(
        notification=Notification(
            id="n",
            message_type="T",
            warehouse=1,
            title="t",
            body="",
            data={},
            created_at_ms=0,
            expires_at_ms=1,
        ),
        cursor=1,
        read=False,
    )
    answers = {
        "NotificationOutput": s.notification_dict(item),
        "UnreadOutput": s.unread_dict(UnreadSummary(unread_count=1, latest=[item])),
        "InboxPageOutput": s.inbox_page_dict(InboxPage(items=[item], unread_count=1, next_since=1)),
    }
    properties = schema["components"]["schemas"][component]["properties"]
    assert list(properties) == list(answers[component])
