"""Staff edit subscriptions in the admin and Redis follows at once."""

import pytest
from django.urls import reverse

from subscriptions.models import MessageType, Subscription

pytestmark = pytest.mark.django_db(transaction=True)


def test_adding_a_role_subscription_in_the_admin_reaches_redis(
    staff_client, warehouse, rep_notice, role, members
):
    response = staff_client.post(
        reverse("admin:subscriptions_subscription_add"),
        {"message_type": rep_notice.pk, "warehouse": warehouse.pk, "role": role.pk},
    )

    assert response.status_code == 302, response.content
    assert members(warehouse, rep_notice) == {f"r:{role.pk}"}


def test_admin_explains_a_subscription_with_both_user_and_role(
    staff_client, warehouse, rep_notice, role, alice
):
    response = staff_client.post(
        reverse("admin:subscriptions_subscription_add"),
        {
            "message_type": rep_notice.pk,
            "warehouse": warehouse.pk,
            "role": role.pk,
            "user": alice.pk,
        },
    )

    assert response.status_code == 200
    assert "Choose either a user or a role, not both." in response.content.decode()
    assert Subscription.objects.count() == 0


def test_admin_delete_action_empties_the_sets(
    staff_client, warehouse, other_warehouse, rep_notice, role, members
):
    subs = [
        Subscription.objects.create(message_type=rep_notice, warehouse=wh, role=role)
        for wh in (warehouse, other_warehouse)
    ]
    response = staff_client.post(
        reverse("admin:subscriptions_subscription_changelist"),
        {"action": "delete_selected", "_selected_action": [s.pk for s in subs], "post": "yes"},
    )

    assert response.status_code == 302
    assert members(warehouse, rep_notice) == set()
    assert members(other_warehouse, rep_notice) == set()


def test_bulk_subscribe_page(staff_client, warehouse, other_warehouse, rep_notice, role, members):
    qc = MessageType.objects.create(code="QC_ALERT", name="QC")
    url = reverse("admin:subscriptions_subscription_bulk")

    page = staff_client.get(url)
    response = staff_client.post(
        url,
        {
            "message_types": [rep_notice.pk, qc.pk],
            "warehouses": [warehouse.pk, other_warehouse.pk],
            "roles": [role.pk],
        },
        follow=True,
    )

    assert page.status_code == 200
    assert "Created 4 subscriptions" in response.content.decode()
    for wh in (warehouse, other_warehouse):
        for mt in (rep_notice, qc):
            assert members(wh, mt) == {f"r:{role.pk}"}


def test_bulk_subscribe_needs_a_subscriber(staff_client, warehouse, rep_notice):
    response = staff_client.post(
        reverse("admin:subscriptions_subscription_bulk"),
        {
            "message_types": [rep_notice.pk],
            "warehouses": [warehouse.pk],
        },
    )

    assert "Choose at least one role or user." in response.content.decode()
    assert Subscription.objects.count() == 0


def test_role_page_edits_its_subscriptions_inline(
    staff_client, warehouse, rep_notice, role, members
):
    response = staff_client.post(
        reverse("admin:auth_group_change", args=[role.pk]),
        {
            "name": role.name,
            "notification_subscriptions-TOTAL_FORMS": "1",
            "notification_subscriptions-INITIAL_FORMS": "0",
            "notification_subscriptions-0-message_type": rep_notice.pk,
            "notification_subscriptions-0-warehouse": warehouse.pk,
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    assert members(warehouse, rep_notice) == {f"r:{role.pk}"}


@pytest.mark.parametrize("name", ["warehouse", "messagetype", "subscription"])
def test_changelists_render_with_search(staff_client, name, warehouse, rep_notice, role):
    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    response = staff_client.get(reverse(f"admin:subscriptions_{name}_changelist"), {"q": "SH"})
    assert response.status_code == 200
