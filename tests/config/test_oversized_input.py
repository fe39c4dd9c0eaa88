"""Oversized input is refused cheaply: lists capped before their items, error answers small."""

from __future__ import annotations

import json
import time

import pytest
from django.conf import settings

from config import api, http_errors

pytestmark = pytest.mark.django_db(transaction=True)

SMALL_ANSWER = 2_000  # bytes


def test_300000_invalid_members_are_refused_fast_with_a_small_answer(alice, client_for, redis):
    body = json.dumps({"members": ["x"] * 300_000, "message": "hi"})
    started = time.perf_counter()

    response = client_for(alice).post("/api/v1/chats/", body, content_type="application/json")

    elapsed = time.perf_counter() - started
    assert response.status_code == 400
    assert len(response.content) < SMALL_ANSWER
    limit = settings.CHAT_MAX_MEMBERS
    assert f"no more than {limit} elements" in response.json()["members"][0]
    assert elapsed < 3  # it took 6.5 s before; parsing the 1.5 MB body is most of what is left
    assert redis.dbsize() == 0


def test_more_members_than_a_chat_can_have_is_refused_before_the_users_are_looked_up(
    alice, client_for, django_assert_max_num_queries
):
    too_many = list(range(1, settings.CHAT_MAX_MEMBERS + 2))

    with django_assert_max_num_queries(0):
        response = client_for(alice).post(
            "/api/v1/chats/", {"members": too_many, "message": "hi"}, format="json"
        )

    assert response.status_code == 400


def test_only_the_first_few_bad_items_are_reported(alice, client_for):
    response = client_for(alice).post(
        "/api/v1/chats/", {"members": ["x"] * 20, "message": "hi"}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()["members"]) == ["0", "1", "2", "3", "4"]


def test_mark_read_ids_are_capped_before_validation(client_for, alice, warehouse, redis):
    body = json.dumps({"warehouse": warehouse.pk, "ids": ["not-a-uuid"] * 100_000})

    response = client_for(alice).post(
        "/api/v1/notifications/read/", body, content_type="application/json"
    )

    assert response.status_code == 400
    assert len(response.content) < SMALL_ANSWER
    assert "no more than" in response.json()["ids"][0]


def test_a_huge_xml_body_is_refused_before_it_is_parsed(client_for, alice, warehouse):
    ids = "".join(f"<list-item>{i:036d}</list-item>" for i in range(100_000))
    body = f"<root><warehouse>{warehouse.pk}</warehouse><ids>{ids}</ids></root>"
    assert len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    started = time.perf_counter()

    response = client_for(alice).post(
        "/api/v1/notifications/read/", body, content_type="application/xml"
    )

    assert response.status_code == 413
    assert time.perf_counter() - started < 1


def test_error_answers_are_trimmed_whatever_raised_them():
    errors = {
        "field": ["x" * 100_000, "second", "3", "4", "5", "6"],
        "other": {i: i for i in range(50)},
    }

    trimmed = api.trimmed(errors)

    assert len(trimmed["field"]) == http_errors.MAX_ERRORS
    assert len(trimmed["field"][0]) == http_errors.MAX_ERROR_TEXT + 1
    assert len(trimmed["other"]) == http_errors.MAX_ERRORS


def test_a_warehouse_id_of_thousands_of_digits_is_a_small_400(client_for, alice):
    response = client_for(alice).get("/api/v1/notifications/", {"warehouse": "9" * 4000})

    assert response.status_code == 400
    assert len(response.content) < SMALL_ANSWER
