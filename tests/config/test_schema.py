"""The OpenAPI schema documents the error answers, so clients and the fuzz run know them."""

from __future__ import annotations

import pytest

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def paths(client):
    return client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]


def operations(paths):
    for path, item in paths.items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def test_every_operation_documents_400_401_403_429_and_503(paths):
    for path, method, operation in operations(paths):
        responses = operation["responses"]
        assert {"400", "401", "403", "429", "503"} <= set(responses), (method, path)
        assert "Retry-After" in responses["503"]["headers"]


def test_404_where_there_is_something_to_find_and_413_where_there_is_a_body(paths):
    for path, method, operation in operations(paths):
        responses = operation["responses"]
        if "{" in path:
            assert "404" in responses, (method, path)
        if "requestBody" in operation:
            assert "413" in responses, (method, path)


def test_pending_is_documented_for_post_and_get(paths):
    assert {"get", "post"} <= set(paths["/api/v1/chats/pending/"])


def test_xml_errors_are_documented_where_xml_is_offered(paths):
    content = paths["/api/v1/notifications/"]["get"]["responses"]["400"]["content"]

    assert {"application/json", "application/xml"} <= set(content)
