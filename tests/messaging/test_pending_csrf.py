"""The pending fetch marks messages seen: a cross-site request must not be able to trigger it.

Under session authentication it needs the CSRF header, whatever the method (POST is the
method; GET is kept for token clients, which CSRF does not concern).
"""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db(transaction=True)

PENDING = "/api/v1/chats/pending/"
CSRF = "a" * 32  # a CSRF secret in the cookie; the header repeats it


@pytest.fixture
def bob_in_a_browser(bob) -> APIClient:
    """Bob's browser: a session cookie and a CSRF cookie, and Django's CSRF check enforced."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(bob)
    client.cookies["csrftoken"] = CSRF
    return client


@pytest.fixture
def waiting(alice, bob, group, client_for):
    """A chat with one message bob has not seen; returns a way to read his unread count."""
    chat = group(alice, bob)
    return lambda: client_for(bob).get(f"/api/v1/chats/{chat.id}/").json()["unread"]


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_cross_site_request_with_only_the_session_cookie_marks_nothing_seen(
    bob_in_a_browser, waiting, method
):
    response = getattr(bob_in_a_browser, method)(PENDING)

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert waiting() == 1


@pytest.mark.parametrize("method", ["get", "post"])
def test_the_page_with_its_csrf_header_fetches_and_marks_seen(bob_in_a_browser, waiting, method):
    response = getattr(bob_in_a_browser, method)(PENDING, HTTP_X_CSRFTOKEN=CSRF)

    assert response.status_code == 200
    ((chat,),) = [response.json()["results"]]
    assert [m["body"] for m in chat["messages"]] == ["hello"]
    assert waiting() == 0


@pytest.mark.parametrize("method", ["get", "post"])
def test_token_clients_need_no_csrf(bob, waiting, method):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")

    response = getattr(client, method)(PENDING)

    assert response.status_code == 200
    assert waiting() == 0


def test_other_reads_under_a_session_need_no_csrf_header(bob_in_a_browser, waiting):
    assert bob_in_a_browser.get("/api/v1/chats/").status_code == 200
