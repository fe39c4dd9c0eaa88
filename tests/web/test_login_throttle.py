"""Sign-in is throttled per user name and per address (django-axes), for the UI's login and the
admin's, with a clear 429 page rather than an error."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

UI_LOGIN = reverse("login")
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture
def limit(settings) -> int:
    return settings.AXES_FAILURE_LIMIT


def sign_in(client: Client, url: str, username: str, password: str, address: str = "10.0.0.1"):
    data = {"username": username, "password": password}
    if url == ADMIN_LOGIN:
        data["next"] = "/admin/"
    return client.post(url, data, REMOTE_ADDR=address)


def assert_locked_out(response) -> None:
    page = response.content.decode()
    assert response.status_code == 429
    assert "Too many failed sign-in attempts" in page
    assert int(response["Retry-After"]) > 0


@pytest.mark.django_db
@pytest.mark.parametrize("url", [UI_LOGIN, ADMIN_LOGIN])
def test_a_user_name_is_locked_after_too_many_failures_from_any_address(
    client, make_user, limit, url
):
    make_user("alice", is_staff=True)
    for attempt in range(limit - 1):
        response = sign_in(client, url, "alice", "wrong", address=f"10.0.1.{attempt}")
        assert response.status_code == 200  # the form again, with its error
    assert_locked_out(sign_in(client, url, "alice", "wrong", address="10.0.1.99"))

    # Even the right password, from a fresh address, is refused while the lock lasts.
    assert_locked_out(sign_in(client, url, "alice", "pw-alice", address="10.0.2.1"))
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_an_address_is_locked_after_too_many_failures_for_any_user_names(client, make_user, limit):
    make_user("bob")
    for attempt in range(limit):
        sign_in(client, UI_LOGIN, f"guess{attempt}", "wrong", address="10.0.3.1")

    assert_locked_out(sign_in(client, UI_LOGIN, "bob", "pw-bob", address="10.0.3.1"))
    # Bob from elsewhere is not affected.
    assert sign_in(client, UI_LOGIN, "bob", "pw-bob", address="10.0.3.2").status_code == 302


@pytest.mark.django_db
def test_a_successful_sign_in_clears_earlier_failures(client, make_user, limit):
    make_user("alice")
    for _ in range(limit - 1):
        sign_in(client, UI_LOGIN, "alice", "wrong")
    assert sign_in(client, UI_LOGIN, "alice", "pw-alice").status_code == 302
    client.logout()

    for _ in range(limit - 1):
        sign_in(client, UI_LOGIN, "alice", "wrong")

    assert sign_in(client, UI_LOGIN, "alice", "pw-alice").status_code == 302


@pytest.mark.django_db
def test_password_spraying_from_one_address_is_locked_out(client, make_user, limit):
    """Issue 20, row 1e: the sprayer's own successful sign-in between sprays does not reset
    the address's count of failures for other user names."""
    make_user("mallory")
    names = [make_user(f"victim{n}").username for n in range(limit - 2)]
    statuses = []
    for round_ in range(3):
        for name in names:
            statuses.append(sign_in(client, UI_LOGIN, name, f"spray{round_}").status_code)
        if 429 not in statuses:
            assert sign_in(client, UI_LOGIN, "mallory", "pw-mallory").status_code == 302
            client.logout()

    assert statuses[: limit - 1] == [200] * (limit - 1)
    assert set(statuses[limit - 1 :]) == {429}
    assert_locked_out(sign_in(client, UI_LOGIN, "mallory", "pw-mallory"))


@pytest.mark.django_db
def test_a_success_does_not_clear_another_names_failures(client, make_user, limit):
    make_user("alice")
    make_user("bob")
    for _ in range(limit - 1):
        sign_in(client, UI_LOGIN, "alice", "wrong", address=f"10.9.0.{_}")
    assert sign_in(client, UI_LOGIN, "bob", "pw-bob", address="10.9.0.0").status_code == 302
    client.logout()

    assert_locked_out(sign_in(client, UI_LOGIN, "alice", "wrong", address="10.9.1.1"))


@pytest.mark.django_db
def test_the_lockout_page_follows_the_browser_language(client, limit):
    for _ in range(limit):
        sign_in(client, UI_LOGIN, "alice", "wrong")

    response = client.post(
        UI_LOGIN,
        {"username": "alice", "password": "x"},
        REMOTE_ADDR="10.0.0.1",
        HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9",
    )

    assert response.status_code == 429
    page = response.content.decode()
    assert '<html lang="zh-hans">' in page
    assert "登录失败次数过多" in page
