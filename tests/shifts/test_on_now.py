"""Who is on now: GET /api/v1/shifts/on-now/ and the Shift admin."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group, User

from shifts.models import Shift

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_schedule")]

UTC = dt.UTC
NOON_MS = int(dt.datetime(2026, 1, 14, 11, 0, tzinfo=UTC).timestamp() * 1000)  # 12:00 Berlin


@pytest.fixture
def setup(warehouse, role, make_user, clock):
    clock.stop_at(NOON_MS)
    warehouse.timezone = "Europe/Berlin"
    warehouse.save()
    night = Group.objects.create(name="Night")
    Shift.objects.create(
        warehouse=warehouse, role=role, name="Early", starts=dt.time(6), ends=dt.time(14)
    )
    Shift.objects.create(
        warehouse=warehouse, role=night, name="Night", starts=dt.time(22), ends=dt.time(6)
    )
    return {
        "early": make_user("early", role),
        "owl": make_user("owl", night),
        "stranger": make_user("stranger"),
        "night": night,
    }


def test_on_now_lists_roles_shifts_and_members(setup, warehouse, role, client_for):
    reply = client_for(setup["owl"]).get("/api/v1/shifts/on-now/", {"warehouse": warehouse.pk})
    assert reply.status_code == 200
    body = reply.json()
    assert body["at"] == "2026-01-14T11:00:00.000Z"
    by_role = {row["role"]["name"]: row for row in body["results"]}
    assert by_role["Replenishment"]["shift"] == {
        "id": Shift.objects.get(name="Early").pk,
        "name": "Early",
        "starts": "2026-01-14T05:00:00.000Z",
        "ends": "2026-01-14T13:00:00.000Z",
    }
    assert by_role["Replenishment"]["members"] == [{"id": setup["early"].pk, "username": "early"}]
    assert by_role["Night"]["shift"] is None
    assert by_role["Night"]["members"] == []
    assert by_role["Night"]["next_start"] == "2026-01-14T21:00:00.000Z"


def test_strangers_get_404_staff_and_members_200(setup, warehouse, client_for, make_user):
    url = "/api/v1/shifts/on-now/"
    assert client_for(setup["stranger"]).get(url, {"warehouse": warehouse.pk}).status_code == 404
    boss = make_user("boss", is_staff=True)
    assert client_for(boss).get(url, {"warehouse": warehouse.pk}).status_code == 200
    assert client_for(boss).get(url, {"warehouse": "x"}).status_code == 400
    assert client_for(boss).get(url).status_code == 400


def test_the_admin_shows_who_is_on_now(setup, client):
    User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(User.objects.get(username="root"))
    page = client.get("/admin/shifts/shift/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "early" in text  # the Early shift runs: its member is listed
    assert "owl" not in text  # the Night shift does not


def test_the_admin_form_refuses_bad_shifts_with_a_message(setup, client, warehouse, role):
    User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(User.objects.get(username="root"))
    reply = client.post(
        "/admin/shifts/shift/add/",
        {
            "warehouse": warehouse.pk,
            "role": role.pk,
            "name": "Late",
            "starts": "14:00",
            "ends": "25:00",
            "weekdays": ["1", "2"],
            "release_claims": "on",
        },
    )
    assert reply.status_code == 200
    assert "Enter a valid time" in reply.content.decode()
    reply = client.post(
        "/admin/shifts/shift/add/",
        {
            "warehouse": warehouse.pk,
            "role": role.pk,
            "name": "Late",
            "starts": "14:00",
            "ends": "22:00",
            "weekdays": ["5", "1"],
        },
    )
    assert reply.status_code == 302
    late = Shift.objects.get(name="Late")
    assert late.weekdays == [1, 5]
    assert late.release_claims is False
