"""One error model, mapped to HTTP in one place, in the client's language."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import override_settings
from rest_framework.response import Response

from config import errors
from config.api import exception_handler
from messaging import services
from messaging.domain import ChatNotFound, InvalidChatRequest
from notifications.services import PublishError
from notifications.store import StaleSubscribers


def handled(error: Exception) -> Response:
    """The DRF exception handler's answer (it has one for every error tested here)."""
    response = exception_handler(error, {})
    assert response is not None, f"no answer for {error!r}"
    return response


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("error", "status", "body"),
    [
        (errors.Invalid("Bad.", field="title"), 400, {"title": ["Bad."]}),
        (errors.Invalid("Bad."), 400, {"detail": "Bad."}),
        (errors.Forbidden("No."), 403, {"detail": "No."}),
        (errors.NotFound("Gone."), 404, {"detail": "Gone."}),
        (errors.Conflict("Changed."), 409, {"detail": "Changed."}),
        (errors.Unavailable("Later."), 503, {"detail": "Later."}),
    ],
    ids=lambda value: getattr(value, "kind", value),
)
def test_each_kind_has_one_status(error, status, body):
    response = handled(error)

    assert response.status_code == status
    assert response.data == body
    assert ("Retry-After" in response) == (status == 503)


def test_the_code_travels_with_the_detail():
    response = handled(errors.Invalid("Bad.", field="title", code="too_long"))

    assert response.data["title"][0].code == "too_long"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (PublishError("title", "x"), errors.ErrorKind.INVALID),
        (InvalidChatRequest("body", "x"), errors.ErrorKind.INVALID),
        (ChatNotFound("g-1"), errors.ErrorKind.NOT_FOUND),
        (StaleSubscribers("x"), errors.ErrorKind.UNAVAILABLE),
    ],
)
def test_the_domain_errors_are_one_family(error, kind):
    assert isinstance(error, errors.DomainError)
    assert error.kind is kind


def test_publish_error_is_still_a_value_error_for_python_callers():
    assert isinstance(PublishError("title", "x"), ValueError)


ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def test_a_publish_error_in_chinese(client_for, make_user, warehouse):
    publisher = make_user("pete")
    publisher.user_permissions.add(Permission.objects.get(codename="publish_notification"))

    response = client_for(publisher).post(
        "/api/v1/notifications/",
        {"message_type": "NOPE", "warehouse": warehouse.pk, "title": "x"},
        format="json",
        **ZH,
    )

    assert response.status_code == 400
    assert response.json() == {"message_type": ["未知的消息类型 'NOPE'。"]}


def test_chat_errors_in_chinese(client_for, alice):
    missing = client_for(alice).get("/api/v1/chats/g-0123456789abcdef/", **ZH)
    myself = client_for(alice).post(
        "/api/v1/chats/direct/", {"user": alice.pk}, format="json", **ZH
    )

    assert missing.status_code == 404
    assert missing.json() == {"detail": "没有这个聊天。"}
    assert myself.json() == {"user": ["私聊需要选择您以外的另一位用户。"]}


def test_redis_unavailable_in_chinese(client_for, alice, redis_down):
    response = client_for(alice).get("/api/v1/chats/", **ZH)

    assert response.status_code == 503
    assert response.json() == {"detail": "消息存储暂时不可用，请稍后重试。"}  # noqa: RUF001


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10)
def test_a_body_over_the_limit_in_chinese(client_for, alice):
    response = client_for(alice).post(
        "/api/v1/chats/", "x" * 20, content_type="application/json", **ZH
    )

    assert response.status_code == 413
    assert response.json() == {
        "detail": f"请求正文超过了 {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} 字节的上限。"
    }


def test_a_chat_id_collision_is_a_409_not_a_500(alice, bob, client_for, monkeypatch, redis):
    taken = services.chat_create_group(creator=alice, member_ids=[bob.pk], message="first")
    monkeypatch.setattr(services.secrets, "token_hex", lambda n: taken.id.removeprefix("g-"))

    response = client_for(alice).post(
        "/api/v1/chats/", {"members": [bob.pk], "message": "second"}, format="json"
    )

    assert response.status_code == 409
    assert "retry" in response.json()["detail"]
