"""A notice keeps its own rules (SPEC 10, 15): made from code with only the fields SPEC names,
and any save that changes its title or body makes a new version, whoever saves it (code, the
admin, the API), once."""

from __future__ import annotations

import datetime as dt

import pytest

from notices import followups, services
from notices.models import Notice, NoticeAck, text_hash
from notifications.selectors import inbox_page

pytestmark = pytest.mark.django_db(transaction=True)

UTC = dt.UTC


def notices_of(user, warehouse) -> list[dict]:
    return [
        i.notification.data
        for i in inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
        if i.notification.message_type == "NOTICE"
    ]


def made_from_code(warehouse, people, **extra) -> Notice:
    """As an import or `manage.py shell` makes one: the fields SPEC 15 names, nothing else."""
    fields = {
        "warehouse": warehouse,
        "title": "Forklift lane B closed",
        "body": "Use lane C until Friday.",
        "severity": "warning",
        "requires_ack": True,
        "due_at": None,
        "escalation_role": people.supervisors,
        "created_by": people.officer,
        "is_closed": False,
        **extra,
    }
    notice = Notice.objects.create(**fields)
    notice.roles.set([people.floor])
    return notice


def test_a_notice_is_made_from_code_with_the_fields_spec_names_and_goes_out(warehouse, people):
    notice = made_from_code(warehouse, people)

    stored = Notice.objects.get(pk=notice.pk)
    assert stored.version == 1
    assert stored.version_at is not None
    assert stored.text_hash == text_hash("Forklift lane B closed", "Use lane C until Friday.")
    # Saving from code does not publish (the audience is set after the row); beat's next pass
    # publishes the version that is behind, to the audience set by then.
    assert notices_of(people.rita, warehouse) == []
    assert followups.pass_all()["published"] == 1
    assert notices_of(people.rita, warehouse) == [{"notice_id": notice.pk, "version": 1}]


def test_changing_the_body_from_code_makes_version_2_everyone_acknowledges_again(
    warehouse, people, post_notice
):
    notice = post_notice()
    services.notice_ack(user=people.rita, notice_id=notice.pk, version=1)

    notice = Notice.objects.get(pk=notice.pk)
    notice.body = "Use lane D until Friday."
    notice.save()

    stored = Notice.objects.get(pk=notice.pk)
    assert (notice.version, stored.version) == (2, 2)
    assert stored.text_hash == text_hash("Forklift lane B closed", "Use lane D until Friday.")
    assert stored.version_at > stored.created_at
    assert stored.published_version == 1  # behind: beat publishes it
    assert followups.pass_all()["published"] == 1
    assert notices_of(people.rita, warehouse)[-1] == {"notice_id": notice.pk, "version": 2}
    # Saving again without a change keeps the version; so does save(update_fields=...).
    stored.save()
    stored.title = "Lane B and lane C closed"
    stored.save(update_fields=["title"])
    assert Notice.objects.get(pk=notice.pk).version == 3


def test_changing_only_the_severity_keeps_the_version_and_its_acknowledgements(warehouse, people):
    notice = made_from_code(warehouse, people)
    services.notice_ack(user=people.rita, notice_id=notice.pk, version=1)

    notice.severity = "critical"
    notice.requires_ack = True
    notice.save()

    stored = Notice.objects.get(pk=notice.pk)
    assert (stored.version, stored.severity) == (1, "critical")
    assert NoticeAck.objects.filter(notice=notice, version=1, user=people.rita).exists()


def test_an_admin_edit_of_the_body_makes_one_new_version_published_once(
    client, warehouse, people, post_notice, make_user
):
    notice = post_notice()
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))

    saved = client.post(
        f"/admin/notices/notice/{notice.pk}/change/",
        {
            "warehouse": warehouse.pk,
            "title": notice.title,
            "body": "Use lane D until Friday.",
            "severity": "warning",
            "roles": [people.floor.pk],
            "requires_ack": "on",
            "escalation_role": people.supervisors.pk,
        },
    )

    assert saved.status_code == 302, saved.content.decode()[:2000]
    stored = Notice.objects.get(pk=notice.pk)
    assert (stored.version, stored.published_version) == (2, 2)  # not 3: one rule, one place
    assert notices_of(people.rita, warehouse) == [
        {"notice_id": notice.pk, "version": 1},
        {"notice_id": notice.pk, "version": 2},
    ]


def test_beat_publishes_a_notice_made_from_code_once_it_has_an_audience(warehouse, people):
    """Code saves the row first and its roles after it (as Django saves many-to-many links):
    a pass in between must not publish it to nobody and count it as gone out."""
    notice = Notice.objects.create(warehouse=warehouse, title="Cold-chain check from Monday")
    assert followups.pass_all()["published"] == 0

    notice.roles.set([people.floor])

    assert followups.pass_all()["published"] == 1
    assert notices_of(people.rita, warehouse) == [{"notice_id": notice.pk, "version": 1}]
    assert Notice.objects.get(pk=notice.pk).published_version == 1
