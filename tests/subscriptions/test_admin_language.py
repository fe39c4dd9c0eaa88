"""The admin names message types in the admin's language: lists, filters and pickers."""

from __future__ import annotations

import pytest
from django.urls import reverse

from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db


@pytest.fixture
def subscribed(warehouse, role) -> MessageType:
    rep = MessageType.objects.create(
        code="REP_NOTICE", name="补货通知", name_en="Replenishment notice"
    )
    Subscription.objects.create(message_type=rep, warehouse=warehouse, role=role)
    return rep


def picker(client, language: str, term: str = "REP") -> list[str]:
    """What the message type picker of the subscription form offers for `term`."""
    answer = client.get(
        reverse("admin:autocomplete"),
        {
            "app_label": "subscriptions",
            "model_name": "subscription",
            "field_name": "message_type",
            "term": term,
        },
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert answer.status_code == 200
    return [result["text"] for result in answer.json()["results"]]


@pytest.mark.parametrize(
    ("language", "name", "other_name"),
    [
        pytest.param("en", "Replenishment notice", "补货通知", id="english"),
        pytest.param("zh-hans", "补货通知", "Replenishment notice", id="chinese"),
    ],
)
def test_the_admin_names_types_in_its_language(
    staff_client, subscribed, language: str, name: str, other_name: str
):
    page = staff_client.get(
        reverse("admin:subscriptions_subscription_changelist"), HTTP_ACCEPT_LANGUAGE=language
    )

    html = page.content.decode()
    # In the list and in the "By message type" filter.
    assert html.count(f"REP_NOTICE - {name}") >= 2
    assert other_name not in html
    assert picker(staff_client, language) == [f"REP_NOTICE - {name}"]


def test_a_type_without_an_english_name_keeps_its_name(staff_client, warehouse, role):
    MessageType.objects.create(code="QC_ALERT", name="质检提醒")

    assert picker(staff_client, "en") == []
    assert picker(staff_client, "en", term="QC") == ["QC_ALERT - 质检提醒"]
