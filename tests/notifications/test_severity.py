"""Severity and alert keys (SPEC section 7): set when publishing, shown in every answer."""

import pytest

from notifications import keys
from notifications.domain import Severity as DomainSeverity
from notifications.selectors import inbox_page, unread_summary
from notifications.services import PublishError
from subscriptions.models import Severity

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_two_severity_enums_agree():
    assert [s.value for s in DomainSeverity] == list(Severity.values)


def test_lifecycle_keys_share_the_warehouse_hash_tag():
    assert keys.flags(4) == "wms:{wh:4}:flags"
    assert keys.states(4) == "wms:{wh:4}:states"
    assert keys.changes(4) == "wms:{wh:4}:changes"
    assert keys.history(4) == "wms:{wh:4}:history"
    assert keys.escalations(4) == "wms:{wh:4}:escalations"
    assert keys.report_counts(4, 20413) == "wms:{wh:4}:report:20413"
    assert keys.report_durations(4, 20413, "claim") == "wms:{wh:4}:report:20413:claim"
    assert keys.report_durations(4, 20413, "resolve") == "wms:{wh:4}:report:20413:resolve"


def test_severity_defaults_to_the_types_and_can_be_overridden(
    warehouse, rep_notice, replenishers, send
):
    rita, _ = replenishers
    rep_notice.default_severity = Severity.WARNING
    rep_notice.save()

    default = send(title="default")
    critical = send(title="critical", severity="critical", key="A-01-03")

    items = {i.notification.id: i for i in inbox_page(user=rita, warehouse_id=warehouse.pk).items}
    assert items[default.id].lifecycle.severity == "warning"
    assert items[default.id].notification.key is None
    assert items[critical.id].lifecycle.severity == "critical"
    assert items[critical.id].notification.key == "A-01-03"


def test_a_new_type_is_info(rep_notice):
    assert rep_notice.default_severity == "info"
    assert rep_notice.escalate_after_seconds is None
    assert rep_notice.escalation_role is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"severity": "urgent"}, "severity"), ({"key": "k" * 201}, "key")],
)
def test_bad_severity_or_key_is_refused(warehouse, replenishers, send, kwargs, field):
    with pytest.raises(PublishError) as caught:
        send(**kwargs)
    assert caught.value.field == field


def test_unread_counts_by_severity(warehouse, replenishers, send):
    rita, _ = replenishers
    send(severity="critical")
    send(severity="critical")
    send(severity="warning")
    send()

    summary = unread_summary(user=rita, warehouse_id=warehouse.pk)

    assert summary.unread_count == 4
    assert summary.by_severity == {"info": 1, "warning": 1, "critical": 2}


def test_api_shows_severity_and_key_in_json_and_xml(
    client_for, warehouse, replenishers, send, make_user
):
    rita, _ = replenishers
    send(severity="critical", key="A-01-03")
    client = client_for(rita)

    listed = client.get("/api/v1/notifications/", {"warehouse": warehouse.pk}).json()
    unread = client.get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk}).json()
    xml = client.get(
        "/api/v1/notifications/", {"warehouse": warehouse.pk}, HTTP_ACCEPT="application/xml"
    ).content.decode()

    (item,) = listed["results"]
    assert (item["severity"], item["key"], item["status"]) == ("critical", "A-01-03", "open")
    assert unread["by_severity"] == {"info": 0, "warning": 0, "critical": 1}
    assert "<severity>critical</severity>" in xml
    assert "<status>open</status>" in xml
    assert "<key>A-01-03</key>" in xml
    assert "<occurrences>1</occurrences>" in xml


def test_api_publish_takes_severity_and_key(client_for, make_user, warehouse, replenishers):
    from django.contrib.auth.models import Permission

    pete = make_user("pete")
    pete.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    rita, _ = replenishers

    created = client_for(pete).post(
        "/api/v1/notifications/",
        {
            "message_type": "REP_NOTICE",
            "warehouse": warehouse.pk,
            "title": "Stock-out A-01-03",
            "severity": "critical",
            "key": "A-01-03",
        },
        format="json",
    )
    refused = client_for(pete).post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "x", "severity": "hot"},
        format="json",
    )

    assert created.status_code == 201
    (item,) = inbox_page(user=rita, warehouse_id=warehouse.pk).items
    assert (item.lifecycle.severity, item.notification.key) == ("critical", "A-01-03")
    assert refused.status_code == 400
    assert "severity" in refused.json()


def test_the_admin_edits_severity_and_escalation(client, make_user, rep_notice, role):
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))

    page = client.get(f"/admin/subscriptions/messagetype/{rep_notice.pk}/change/")
    saved = client.post(
        f"/admin/subscriptions/messagetype/{rep_notice.pk}/change/",
        {
            "code": "REP_NOTICE",
            "name": "补货通知",
            "description": "",
            "is_active": "on",
            "default_ttl_seconds": 3600,
            "default_severity": "critical",
            "escalate_after_seconds": 120,
            "escalation_role": role.pk,
            "remind_max": 3,
            # The type's alert actions (SPEC 14), inline: none.
            "alert_actions-TOTAL_FORMS": 0,
            "alert_actions-INITIAL_FORMS": 0,
        },
    )
    listing = client.get("/admin/subscriptions/messagetype/")

    text = page.content.decode()
    assert 'name="default_severity"' in text
    assert 'name="escalate_after_seconds"' in text
    assert "delivered to the escalation role" in text  # the help text
    assert saved.status_code == 302
    rep_notice.refresh_from_db()
    assert (rep_notice.default_severity, rep_notice.escalate_after_seconds) == ("critical", 120)
    assert rep_notice.escalation_role == role
    assert "after 120 s to Replenishment" in listing.content.decode()
