"""The notices API (SPEC 15): publish to the audience's inboxes, list with my_ack, acknowledge
once per version, new versions on edit, the roster and its CSV, 404 / 409 / 503."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from notices.models import Notice, NoticeAck, text_hash
from notifications.selectors import inbox_page
from tests.racing import race

pytestmark = pytest.mark.django_db(transaction=True)

S = 1000


def notices_in_inbox(user, warehouse) -> list[dict]:
    return [
        i.notification.data
        for i in inbox_page(user=user, warehouse_id=warehouse.pk, include_read=True).items
        if i.notification.message_type == "NOTICE"
    ]


def test_publishing_reaches_the_audience_whether_or_not_it_subscribes(
    warehouse, people, client_for
):
    answer = client_for(people.officer).post(
        "/api/v1/notices/",
        {
            "warehouse": warehouse.pk,
            "title": "Forklift lane B closed",
            "body": "Use lane C <b>until</b> Friday.",
            "severity": "critical",
            "roles": [people.floor.pk],
            "users": [people.sam.pk],
            "due_at": "2026-11-23T12:00:00Z",
            "escalation_role": people.supervisors.pk,
        },
        format="json",
    )

    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["version"] == 1
    assert body["published"] is True
    assert body["my_ack"] is None
    assert body["in_audience"] is False
    assert body["roles"] == [{"id": people.floor.pk, "name": "Floor"}]
    assert body["due_at"] == "2026-11-23T12:00:00.000Z"
    expected = [{"notice_id": body["id"], "version": 1}]
    assert notices_in_inbox(people.rita, warehouse) == expected  # through the role
    assert notices_in_inbox(people.sam, warehouse) == expected  # as a user of it
    assert notices_in_inbox(people.olga, warehouse) == []
    [item] = [i for i in inbox_page(user=people.rita, warehouse_id=warehouse.pk).items]
    assert item.notification.body == "Use lane C <b>until</b> Friday."  # text as it was sent
    assert item.notification.severity == "critical"


def test_only_those_allowed_publish_and_input_is_checked(warehouse, people, client_for):
    rita = client_for(people.rita)
    answer = rita.post(
        "/api/v1/notices/",
        {"warehouse": warehouse.pk, "title": "x", "roles": [people.floor.pk]},
        format="json",
    )
    assert answer.status_code == 403
    officer = client_for(people.officer)
    no_audience = officer.post(
        "/api/v1/notices/", {"warehouse": warehouse.pk, "title": "x"}, format="json"
    )
    assert no_audience.status_code == 400
    assert "roles" in no_audience.json()
    bad_json = officer.post("/api/v1/notices/", "{not json", content_type="application/json")
    assert bad_json.status_code == 400
    unknown_role = officer.post(
        "/api/v1/notices/",
        {"warehouse": warehouse.pk, "title": "x", "roles": [999999]},
        format="json",
    )
    assert unknown_role.status_code == 400
    assert not Notice.objects.exists()


def test_list_detail_and_ack_once_per_version(warehouse, people, post_notice, client_for, clock):
    notice = post_notice()
    rita, olga = client_for(people.rita), client_for(people.olga)

    [listed] = rita.get(f"/api/v1/notices/?warehouse={warehouse.pk}").json()["results"]
    assert (listed["id"], listed["my_ack"], listed["in_audience"]) == (notice.pk, None, True)
    assert listed["roster_allowed"] is False
    assert olga.get(f"/api/v1/notices/?warehouse={warehouse.pk}").json()["results"] == []
    assert olga.get(f"/api/v1/notices/{notice.pk}/").status_code == 404
    assert olga.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 404
    assert rita.post("/api/v1/notices/99999/ack/", {"version": 1}).status_code == 404

    clock.stop_at(1_900_000_000_000)
    first = rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}, format="json")
    assert first.status_code == 200
    assert first.json()["my_ack"] == "2030-03-17T17:46:40.000Z"
    clock.stop_at(1_900_000_060_000)
    again = rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}, format="json")
    assert again.status_code == 200
    assert again.json()["my_ack"] == "2030-03-17T17:46:40.000Z"  # the first time kept
    assert rita.get(f"/api/v1/notices/{notice.pk}/").json()["my_ack"] == first.json()["my_ack"]

    wrong = rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 2}, format="json")
    assert wrong.status_code == 409
    assert wrong.json()["version"] == 1
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": "x"}).status_code == 400
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {}).status_code == 400
    [ack] = NoticeAck.objects.all()
    assert (ack.user_id, ack.version) == (people.rita.pk, 1)
    assert ack.text_hash == text_hash("Forklift lane B closed", "Use lane C until Friday.")


def test_an_ack_is_one_insert(warehouse, people, post_notice, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    notice = post_notice()
    rita = client_for(people.rita)
    with CaptureQueriesContext(connection) as queries:
        assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert len(writes) == 1
    assert writes[0].startswith('INSERT INTO "notices_noticeack"')


def test_editing_the_text_makes_a_new_version_everyone_acknowledges_again(
    warehouse, people, post_notice, client_for
):
    notice = post_notice()
    rita, officer = client_for(people.rita), client_for(people.officer)
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 200

    # Not the text: the same version.
    same = officer.patch(f"/api/v1/notices/{notice.pk}/", {"severity": "critical"}, format="json")
    assert same.status_code == 200
    assert same.json()["version"] == 1
    changed = officer.patch(
        f"/api/v1/notices/{notice.pk}/", {"body": "Use lane D until Friday."}, format="json"
    )
    assert changed.status_code == 200
    assert changed.json()["version"] == 2

    mine = rita.get(f"/api/v1/notices/{notice.pk}/").json()
    assert (mine["version"], mine["my_ack"]) == (2, None)
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1}).status_code == 409
    assert notices_in_inbox(people.rita, warehouse) == [
        {"notice_id": notice.pk, "version": 1},
        {"notice_id": notice.pk, "version": 2},
    ]  # a new version is published again
    # The first acknowledgement stays recorded, with the text that was read then.
    [old] = NoticeAck.objects.all()
    assert old.version == 1
    assert old.text_hash == text_hash("Forklift lane B closed", "Use lane C until Friday.")
    assert rita.post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 2}).status_code == 200
    hashes = dict(NoticeAck.objects.values_list("version", "text_hash"))
    assert hashes[2] == text_hash("Forklift lane B closed", "Use lane D until Friday.")

    assert (
        rita.patch(f"/api/v1/notices/{notice.pk}/", {"title": "x"}, format="json").status_code
        == 403
    )


def test_two_taps_at_once_make_one_record(warehouse, people, post_notice, client_for):
    notice = post_notice()
    # One client each, made before the racers are released.
    clients = [client_for(User.objects.get(pk=people.rita.pk)) for _ in range(2)]
    url = f"/api/v1/notices/{notice.pk}/ack/"

    def tap():
        client = clients.pop()
        # SQLite's shared test database may refuse a racer outright ("locked"): the page
        # taps again, as after a dropped request (at most a few times).
        for _ in range(4):
            try:
                return client.post(url, {"version": 1})
            except Exception as exc:
                if "locked" not in str(exc):
                    raise
        return client.post(url, {"version": 1})  # the fifth and last tap

    answers, failures = race(2, tap)

    assert failures == []
    assert NoticeAck.objects.count() == 1
    assert [a.status_code for a in answers] == [200, 200]
    assert len({a.json()["my_ack"] for a in answers}) == 1  # the first time, kept


def test_the_roster_lists_the_audience_now_with_a_later_joiner_and_exports_csv(
    warehouse, people, post_notice, client_for, make_user
):
    notice = post_notice(users=[people.olga])
    client_for(people.rita).post(f"/api/v1/notices/{notice.pk}/ack/", {"version": 1})
    nina = make_user("nina", people.floor)  # joined the role after publishing

    assert client_for(people.rita).get(f"/api/v1/notices/{notice.pk}/roster/").status_code == 403
    outsider = make_user("oscar")
    assert client_for(outsider).get(f"/api/v1/notices/{notice.pk}/roster/").status_code == 404
    answer = client_for(people.sam).get(f"/api/v1/notices/{notice.pk}/roster/")  # escalation role
    assert answer.status_code == 200
    roster = answer.json()
    assert (roster["version"], roster["total"], roster["acknowledged"], roster["missing"]) == (
        1,
        4,
        1,
        3,
    )
    rows = [
        (r["user"]["username"], r["acked_at"] is not None, r["on_shift"]) for r in roster["results"]
    ]
    assert rows == [
        ("nina", False, True),
        ("olga", False, True),
        ("ralf", False, True),
        ("rita", True, True),
    ]  # the missing first; no shifts in this warehouse: everyone is on
    assert nina.pk in [r["user"]["id"] for r in roster["results"]]

    exported = client_for(people.sam).get(f"/api/v1/notices/{notice.pk}/roster/?format=csv")
    assert exported.status_code == 200
    assert exported["Content-Type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(exported.content.decode())))
    assert table[0] == ["notice", "version", "user_id", "username", "acked_at", "on_shift"]
    assert [row[3] for row in table[1:]] == ["nina", "olga", "ralf", "rita"]
    assert table[4][4] == roster["results"][3]["acked_at"]


def test_a_username_that_looks_like_a_formula_is_text_in_the_csv(
    warehouse, people, post_notice, client_for, make_user
):
    make_user("=cmd", people.floor)
    notice = post_notice()
    staff = make_user("admin", is_staff=True)
    text = client_for(staff).get(f"/api/v1/notices/{notice.pk}/roster/?format=csv").content
    assert b"'=cmd" in text


def test_redis_down_is_503_and_writes_nothing(warehouse, people, client_for, redis_down):
    answer = client_for(people.officer).post(
        "/api/v1/notices/",
        {"warehouse": warehouse.pk, "title": "x", "roles": [people.floor.pk]},
        format="json",
    )
    assert answer.status_code == 503
    assert answer["Retry-After"]
    assert not Notice.objects.exists()
