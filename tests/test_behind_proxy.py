"""Behind the reverse proxy docs/operating/deploy.md ships (deploy/nginx/wms-proxy.conf in front of
Procfile.production's gunicorn): the client's address is the one nginx saw, so failed sign-ins
from one machine lock out no one at another, and no client forwards its way out of a lockout;
and what nginx or gunicorn refuse before Django sees it is answered in JSON, never an HTML
page (SPEC 10)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests import production_shape
from tests.production_shape import Answer, Site, exchange, http_request

LIMIT = 4  # LOGIN_FAILURE_LIMIT of the deployment below
USERS = ("alice", "bob", "carol", "dave", "erin")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    directory: Path = tmp_path_factory.mktemp("production-shape")
    users = "\n".join(
        f"User.objects.create_user({name!r}, password={f'pw-{name}'!r})" for name in USERS
    )
    with production_shape.running(
        directory,
        setup=f"from django.contrib.auth.models import User\n{users}",
        LOGIN_FAILURE_LIMIT=str(LIMIT),
    ) as running:
        yield running


def sign_in(
    site: Site,
    username: str,
    password: str,
    *,
    source: str,
    forwarded_for: str | None = None,
    port: int | None = None,
) -> int:
    """The UI's sign-in form, as a browser on `source` sends it: the page, then the form."""
    extra = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    port = port or site.nginx_port
    page = exchange(port, http_request("GET", "/login/", headers=extra), source=source)
    token = page.cookies["csrftoken"]
    form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
    answer: Answer = exchange(
        port,
        http_request(
            "POST",
            "/login/",
            headers={
                **extra,
                "Cookie": f"csrftoken={token}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            body=form.encode(),
        ),
        source=source,
    )
    return answer.status


def test_failed_sign_ins_from_other_machines_lock_no_one_else_out(site):
    """Issue row E: four failures from four machines with made-up names used to lock out
    everyone, since every client reached Django as the proxy's 127.0.0.1."""
    statuses = [
        sign_in(site, f"nobody{machine}", "guess", source=f"127.0.0.{11 + machine}")
        for machine in range(LIMIT)
    ]

    alice = sign_in(site, "alice", "pw-alice", source="127.0.0.20")
    bob = sign_in(site, "bob", "pw-bob", source="127.0.0.21")

    assert (alice, bob) == (302, 302), site.log_tail()
    assert statuses == [200] * LIMIT  # each machine got the form again, with its error


def test_a_machine_cannot_forward_its_way_out_of_its_lockout(site):
    """nginx adds the address it saw to what the client sent; Django believes only that."""
    statuses = [
        sign_in(site, f"guess{n}", "guess", source="127.0.0.30", forwarded_for=f"10.1.0.{n}")
        for n in range(LIMIT)
    ]
    assert statuses == [200] * (LIMIT - 1) + [429]  # the last failure locks the address

    locked = sign_in(site, "carol", "pw-carol", source="127.0.0.30", forwarded_for="10.1.0.99")
    assert locked == 429
    assert sign_in(site, "carol", "pw-carol", source="127.0.0.31") == 302


def test_forwarded_for_from_a_peer_that_is_not_a_trusted_proxy_is_not_believed(site):
    """A client that reaches gunicorn itself (not through nginx) and names dave's machine in
    X-Forwarded-For locks out its own address, not dave's."""
    statuses = [
        sign_in(
            site,
            f"mallory{n}",
            "guess",
            source="127.0.0.40",
            forwarded_for="127.0.0.22",
            port=site.web_port,
        )
        for n in range(LIMIT)
    ]
    assert statuses == [200] * (LIMIT - 1) + [429]

    assert sign_in(site, "dave", "pw-dave", source="127.0.0.22") == 302
    direct = sign_in(
        site, "erin", "pw-erin", source="127.0.0.40", forwarded_for="127.0.0.23", port=site.web_port
    )
    assert direct == 429


def assert_json_error(answer: Answer, status: int) -> None:
    assert answer.status == status, answer
    assert answer.headers["content-type"].startswith("application/json"), answer
    body = answer.json()
    assert isinstance(body, dict)
    assert set(body) == {"detail"}
    assert isinstance(body["detail"], str)
    assert body["detail"]


SOURCE = "127.0.0.50"


def test_a_body_over_the_proxys_limit_is_a_json_413(site):
    body = b'{"title": "' + b"x" * (4 * 1024 * 1024) + b'"}'
    answer = site.post(
        "/api/v1/notifications/", body, source=SOURCE, headers={"Content-Type": "application/json"}
    )

    assert_json_error(answer, 413)


def test_headers_over_the_proxys_buffers_are_a_json_400(site):
    answer = site.get("/api/v1/chats/", source=SOURCE, headers={"X-Filler": "x" * 10_000})

    assert_json_error(answer, 400)


def test_a_request_line_nginx_cannot_parse_is_a_json_400(site):
    answer = exchange(
        site.nginx_port, b"GET /api/v1/chats/ HTTP/1.1 nonsense\r\n\r\n", source=SOURCE
    )

    assert_json_error(answer, 400)


def test_a_5000_character_id_in_a_path_is_a_json_414_from_gunicorn(site):
    """nginx passes it (its buffers hold 8 KB); gunicorn's request line limit refuses it."""
    answer = site.get(f"/api/v1/chats/{'a' * 5000}/", source=SOURCE)

    assert_json_error(answer, 414)


def test_a_path_over_the_proxys_buffers_is_a_json_414_from_nginx(site):
    answer = site.get(f"/api/v1/chats/{'a' * 10_000}/", source=SOURCE)

    assert_json_error(answer, 414)


def test_a_delete_byte_in_an_idempotency_key_is_a_json_400(site):
    """nginx passes the byte on; gunicorn refuses the header."""
    answer = exchange(
        site.nginx_port,
        http_request(
            "POST",
            "/api/v1/notifications/",
            headers={"Content-Type": "application/json", "Idempotency-Key": "retry\x7f1"},
            body=b"{}",
        ),
        source=SOURCE,
    )

    assert_json_error(answer, 400)


def test_a_server_that_is_down_is_a_json_502_with_retry_after(site):
    """The stream's server is not running in these tests."""
    answer = site.get("/api/v1/stream/?warehouse=1", source=SOURCE)

    assert_json_error(answer, 502)
    assert int(answer.headers["retry-after"]) > 0


def test_django_answers_pass_the_proxy_unchanged(site):
    """The proxy answers only its own errors: the API's JSON errors and the pages stay Django's."""
    anonymous = site.get("/api/v1/chats/", source=SOURCE)
    unknown = site.get("/api/v1/no-such-thing/", source=SOURCE)
    page = site.get("/login/", source=SOURCE)

    assert (anonymous.status, anonymous.json()) == (
        403,
        {"detail": "Authentication credentials were not provided."},
    )
    assert (unknown.status, unknown.json()) == (404, {"detail": "Not found."})
    assert page.status == 200
    assert page.headers["content-type"].startswith("text/html")
