"""A notice is one thing to clear (SPEC 15, turn 5): acknowledging it also reads its
notifications for me (the badge drops), and a NOTICE notification offers no claim or resolve
(the API refuses them with a JSON 422 naming why)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator

import pytest
from django.db import connection

from notices import followups, services
from shifts.models import Shift
from tests.notices.conftest import BEFORE_EARLY, S, ms

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_full_after_ack(redis):
    """Redis refuses writes (out of memory, as a full Redis does: reads still work) right after
    the INSERT of an acknowledgement, until the end of the block."""
    policy = redis.config_get("maxmemory-policy")["maxmemory-policy"]

    @contextlib.contextmanager
    def full() -> Iterator[None]:
        def fill_after_the_ack(execute, sql, params, many, context):
            result = execute(sql, params, many, context)
            if sql.startswith('INSERT INTO "notices_noticeack"'):
                redis.config_set("maxmemory-policy", "noeviction")
                redis.config_set("maxmemory", 1)
            return result

        try:
            with connection.execute_wrapper(fill_after_the_ack):
                yield
        finally:
            redis.config_set("maxmemory", 0)
            redis.config_set("maxmemory-policy", policy)

    return full


def unread(client, warehouse) -> tuple[int, list[dict]]:
    """My unread count and my unread NOTICE notifications, as the bell asks for them."""
    answer = client.get(f"/api/v1/notifications/unread/?warehouse={warehouse.pk}")
    assert answer.status_code == 200
    body = answer.json()
    listed = client.get(f"/api/v1/notifications/?warehouse={warehouse.pk}").json()["results"]
    notices = [n for n in listed if n["message_type"] == "NOTICE" and not n["read"]]
    return body["unread_count"], notices


def test_acknowledging_reads_the_notices_notification_for_me_alone(
    warehouse, people, post_notice, client_for
):
    notice = post_notice()
    rita, ralf = client_for(people.rita), client_for(people.ralf)
    count, notes = unread(rita, warehouse)
    assert count == 1
    assert [n["data"] for n in notes] == [{"notice_id": notice.pk, "version": 1}]

    answer = rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}, format="json")

    assert answer.status_code == 200
    assert unread(rita, warehouse) == (0, [])  # the badge drops; the card is read
    assert unread(ralf, warehouse)[0] == 1  # for me alone


def test_acknowledging_a_new_version_reads_the_earlier_ones_and_the_reminders_too(
    warehouse, people, post_notice, client_for, clock
):
    clock.stop_at(ms(BEFORE_EARLY))
    Shift.objects.create(
        warehouse=warehouse, role=people.floor, name="Early", starts=dt.time(6), ends=dt.time(14)
    )
    notice = post_notice()
    clock.stop_at(ms(BEFORE_EARLY) + 6 * S)  # Early started: a reminder to rita and ralf
    assert followups.pass_all()["reminded"] == 2
    services.notice_update(notice_id=notice.pk, changes={"body": "Use lane D until Friday."})
    rita = client_for(people.rita)
    count, notes = unread(rita, warehouse)
    assert count == 3  # version 1, its reminder, version 2
    assert len(notes) == 3

    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 2}).status_code == 200

    assert unread(rita, warehouse) == (0, [])
    assert unread(client_for(people.ralf), warehouse)[0] == 3


@pytest.mark.single_redis  # fills the one plain server; the cluster's nodes are others
def test_acknowledging_again_reads_what_a_failed_read_left(
    warehouse, people, post_notice, client_for, redis_full_after_ack
):
    """Redis failed between recording the acknowledgement and reading the notification: the
    answer is 503 (the acknowledgement stands) and the repeat reads it."""
    notice = post_notice()
    rita = client_for(people.rita)
    with redis_full_after_ack():
        failed = rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1})
    assert failed.status_code == 503
    assert failed["Retry-After"]
    assert unread(rita, warehouse)[0] == 1
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 200
    assert unread(rita, warehouse)[0] == 0


@pytest.mark.parametrize("step", ["claim", "resolve"])
def test_a_notice_offers_no_claim_or_resolve(warehouse, people, post_notice, client_for, step):
    notice = post_notice()
    rita = client_for(people.rita)
    [note] = unread(rita, warehouse)[1]

    answer = rita.post(
        f"/api/v1/notifications/{note['id']}/{step}/",
        {"warehouse": warehouse.pk},
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"{step}-1",
    )

    assert answer.status_code == 422, answer.content
    assert answer["Content-Type"].startswith("application/json")
    body = answer.json()
    assert list(body) == ["detail"]
    assert "claim" in body["detail"]
    assert "resolve" in body["detail"]
    listed = rita.get(f"/api/v1/notifications/?warehouse={warehouse.pk}").json()["results"]
    [still] = [n for n in listed if n["id"] == note["id"]]
    assert (still["status"], still["read"]) == ("open", False)  # nothing changed
    # The notice itself is cleared by acknowledging it.
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 200
    assert unread(rita, warehouse)[0] == 0
