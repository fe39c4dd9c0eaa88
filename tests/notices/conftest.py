"""Fixtures of notices: a floor role with two operators, supervisors (the escalation role), a
safety officer allowed to publish, and a way to publish a notice as they would."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group, Permission, User

from notices import services
from notices.models import Notice

# 05:59:55: the floor's Early shift starts in five seconds.
BEFORE_EARLY = dt.datetime(2026, 1, 14, 5, 59, 55, tzinfo=dt.UTC)
S = 1000  # a second, in milliseconds


def ms(value: dt.datetime) -> int:
    """`value` in milliseconds since the epoch, as the clock fixture takes it."""
    return int(value.timestamp() * 1000)


@dataclass
class People:
    floor: Group
    supervisors: Group
    rita: User
    ralf: User
    sam: User  # a supervisor
    olga: User  # in no audience
    officer: User  # may add and change notices


@pytest.fixture(autouse=True)
def _fresh_schedule(fresh_schedule: None) -> None:
    """Every notices test reads the schedule of shifts afresh (tests/conftest.py)."""


@pytest.fixture
def people(make_user) -> People:
    floor = Group.objects.create(name="Floor")
    supervisors = Group.objects.create(name="Supervisors")
    officer = make_user("otto")
    officer.user_permissions.add(
        *Permission.objects.filter(codename__in=["add_notice", "change_notice"])
    )
    return People(
        floor=floor,
        supervisors=supervisors,
        rita=make_user("rita", floor, email="rita@example.com"),
        ralf=make_user("ralf", floor),
        sam=make_user("sam", supervisors, email="sam@example.com"),
        olga=make_user("olga"),
        officer=User.objects.get(pk=officer.pk),
    )


@pytest.fixture
def post_notice(warehouse, people):
    """Publish a notice to the floor through the service (as the API does)."""

    def post(title: str = "Forklift lane B closed", **extra) -> Notice:
        fields = {
            "warehouse": warehouse,
            "title": title,
            "body": "Use lane C until Friday.",
            "severity": "warning",
            "roles": [people.floor],
            "users": [],
            "escalation_role": people.supervisors,
            **extra,
        }
        return services.notice_create(user=people.officer, **fields)

    return post
