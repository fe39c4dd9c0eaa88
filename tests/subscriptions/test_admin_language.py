"""The admin names message types in the admin's language: lists, filters and pickers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(User.objects.create_superuser("boss", "boss@example.com", "pw"))
    return client


@pytest.fixture
def subscribed(warehouse, role) -> MessageType:
    rep = MessageType.objects.create(
        code="REP_NOTICE", name="补货通知", name_en="Replenishment notice"
    )
    Subscription.objects.create(message_type=rep, warehouse=warehouse, role=role)
    return rep


def picker(client, language: str) -> list[str]:
    """What the message type picker of the subscription form offers for "REP"."""
    answer = client.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "subscriptions",
            "model_name": "subscription",
            "field_name": "message_type",
            "term": "REP",
        },
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert answer.status_code == 200
    return [result["text"] for result in answer.json()["results"]]


def test_the_english_admin_names_types_in_english(staff_client, subscribed):
    page = staff_client.get(
        reverse("admin:subscriptions_subscription_changelist"), HTTP_ACCEPT_LANGUAGE="en"
    )

    html = page.content.decode()
    # In the list and in the "By message type" filter.
    assert html.count("REP_NOTICE - Replenishment notice") >= 2
    assert "补货通知" not in html
    assert picker(staff_client, "en") == ["REP_NOTICE - Replenishment notice"]


def test_the_chinese_admin_names_types_in_chinese(staff_client, subscribed):
    page = staff_client.get(
        reverse("admin:subscriptions_subscription_changelist"), HTTP_ACCEPT_LANGUAGE="zh-hans"
    )

    html = page.content.decode()
    assert html.count("REP_NOTICE - 补货通知") >= 2
    assert "Replenishment notice" not in html
    assert picker(staff_client, "zh-hans") == ["REP_NOTICE - 补货通知"]


def test_a_type_without_an_english_name_keeps_its_name(staff_client, warehouse, role):
    MessageType.objects.create(code="QC_ALERT", name="质检提醒")

    assert picker(staff_client, "en") == []
    answer = staff_client.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "subscriptions",
            "model_name": "subscription",
            "field_name": "message_type",
            "term": "QC",
        },
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert [r["text"] for r in answer.json()["results"]] == ["QC_ALERT - 质检提醒"]
