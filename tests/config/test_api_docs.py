"""The OpenAPI schema and its docs page (SPEC 10): signed-in users only when DEBUG is off,
unless API_DOCS_PUBLIC opens them; anonymous visitors get the API's usual JSON answer."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

PAGES = ["/api/schema/", "/api/docs/"]


@pytest.fixture
def anonymous_api_answer(client):
    """What the API answers a request without credentials."""
    answer = client.get("/api/v1/chats/")
    assert answer.status_code in (401, 403)
    return answer.status_code, answer.json()


@pytest.mark.parametrize(
    ("path", "accept"),
    [
        ("/api/schema/", None),  # curl's */*
        ("/api/schema/", "application/vnd.oai.openapi"),
        ("/api/schema/", "application/json"),
        ("/api/docs/", None),
        ("/api/docs/", "text/html,application/xhtml+xml"),  # a browser
    ],
)
def test_anonymous_visitors_get_the_apis_json_answer(client, anonymous_api_answer, path, accept):
    headers = {"HTTP_ACCEPT": accept} if accept else {}

    status, body = anonymous_api_answer

    answer = client.get(path, **headers)

    assert answer.status_code == status
    assert answer["Content-Type"].startswith("application/json")
    assert answer.json() == body


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_user_reads_them(client, alice, path):
    client.force_login(alice)

    assert client.get(path).status_code == 200


def test_an_api_client_reads_the_schema(client_for, alice):
    answer = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/json")

    assert answer.status_code == 200
    assert "/api/v1/notifications/" in answer.json()["paths"]


@pytest.mark.parametrize("path", PAGES)
def test_api_docs_public_opens_them(client, settings, path):
    settings.API_DOCS_PUBLIC = True

    assert client.get(path).status_code == 200


@pytest.mark.parametrize("path", PAGES)
def test_debug_opens_them(client, settings, path):
    settings.DEBUG = True

    assert client.get(path).status_code == 200
