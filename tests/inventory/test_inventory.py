"""The inventory demo app: pick waves, the negative-stock rule in Python and SQL, demo data."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from demo.data import load_demo_data
from inventory import services
from inventory.demo import SQL_RULE_NAME
from inventory.models import Bin
from inventory.rules import NegativeBinStock
from rules import Alert, registry, runner, sources
from rules.domain import AlertStatus
from rules.models import SqlRule
from subscriptions.models import Warehouse
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA


@pytest.fixture
def bins(warehouse):
    return [
        Bin.objects.create(warehouse=warehouse, code=code, stock=stock)
        for code, stock in (("A-01-03", 6), ("A-01-04", 40))
    ]


def test_a_pick_wave_lowers_stock_and_may_drive_a_bin_negative(warehouse, bins):
    wave = services.run_pick_wave(
        warehouse=warehouse, picks={"A-01-03": 18, "A-01-04": 5}, number=8812
    )

    assert wave.negative == ["A-01-03"]
    assert dict(Bin.objects.values_list("code", "stock")) == {"A-01-03": -12, "A-01-04": 35}
    assert set(Bin.objects.values_list("last_wave", flat=True)) == {8812}
    assert services.next_wave_number() == 8813


@pytest.mark.parametrize(
    ("picks", "message"),
    [
        ({"Z-99": 1}, "No such bins in warehouse"),
        ({"A-01-03": 0}, "positive whole quantity"),
    ],
)
def test_a_pick_wave_refuses_unknown_bins_and_bad_quantities(warehouse, bins, picks, message):
    with pytest.raises(ValueError, match=message):
        services.run_pick_wave(warehouse=warehouse, picks=picks)


def test_the_python_rule_raises_a_replenishment_notice_per_negative_bin(
    warehouse, bins, other_warehouse
):
    services.run_pick_wave(warehouse=warehouse, picks={"A-01-03": 18}, number=8812)
    Bin.objects.create(warehouse=other_warehouse, code="B-01-01", stock=-1)
    Warehouse.objects.filter(pk=other_warehouse.pk).update(is_active=False)

    alerts = list(NegativeBinStock().alerts())

    assert alerts == [
        Alert(
            warehouse=warehouse.pk,
            title="Replenish A-01-03",
            body="Stock is -12 after wave 8812",
            data={"bin": "A-01-03", "qty": -12},
            key="A-01-03",
        )
    ]
    assert registry.get("negative_bin_stock") is NegativeBinStock
    assert NegativeBinStock.message_type == "REP_NOTICE"


def test_demo_data_ships_bins_a_negative_bin_and_the_sql_rule(db):
    load_demo_data()
    load_demo_data()  # idempotent: no second wave, no second rule

    sh01 = Warehouse.objects.get(code="SH01")
    assert Bin.objects.get(warehouse=sh01, code="A-01-03").stock == -12
    assert Bin.objects.filter(warehouse__code="HH02").count() >= 3
    rule = SqlRule.objects.get(name=SQL_RULE_NAME)
    assert rule.message_type.code == "REP_NOTICE"
    assert rule.is_active is False
    rule.full_clean()


@RULES_READ_COMMITTED_DATA
def test_the_sql_twin_previews_exactly_what_the_python_rule_yields(db):
    load_demo_data()
    rule = SqlRule.objects.select_related("message_type").get(name=SQL_RULE_NAME)

    preview = runner.run_rule(sources.SqlRuleRunnable(rule), dry_run=True)

    assert preview.error == ""
    assert [o.alert for o in preview.outcomes] == list(NegativeBinStock().alerts())
    assert [o.status for o in preview.outcomes] == [AlertStatus.WOULD_SEND]


def test_the_demo_raises_a_replenishment_notice_for_alice(
    db, django_capture_on_commit_callbacks, client_for
):
    with django_capture_on_commit_callbacks(execute=True):  # mirror subscriptions into Redis
        load_demo_data()
    alice = User.objects.get(username="alice")  # of the Replenishment role

    runs = {r.rule.name: r for r in runner.run_due_rules()}

    assert runs["negative_bin_stock"].sent == 1
    assert SQL_RULE_NAME not in runs  # shipped inactive: the Python rule sends these notices
    sh01 = Warehouse.objects.get(code="SH01")
    body = client_for(alice).get("/api/v1/notifications/", {"warehouse": sh01.pk}).json()
    notices = [n for n in body["results"] if n["message_type"] == "REP_NOTICE"]
    assert [(n["title"], n["body"], n["data"]) for n in notices] == [
        ("Replenish A-01-03", "Stock is -12 after wave 8812", {"bin": "A-01-03", "qty": -12})
    ]


def test_the_demo_stock_out_is_critical_and_escalates_to_the_supervisors(
    db, django_capture_on_commit_callbacks, client_for
):
    from config import timestamps
    from notifications import lifecycle

    with django_capture_on_commit_callbacks(execute=True):
        load_demo_data()
    alice, carol = User.objects.get(username="alice"), User.objects.get(username="carol")
    sh01 = Warehouse.objects.get(code="SH01")

    runs = {r.rule.name: r for r in runner.run_due_rules()}
    escalated = lifecycle.escalate_all(at_ms=timestamps.now_ms() + 121_000)

    assert runs["bin_stock_out"].sent == 1  # A-01-03 is at -12
    assert escalated == 1
    for user in (alice, carol):  # Replenishment, and now the Supervisors too
        body = client_for(user).get("/api/v1/notifications/", {"warehouse": sh01.pk}).json()
        (alert,) = [n for n in body["results"] if n["message_type"] == "STOCK_OUT"]
        assert (alert["title"], alert["severity"], alert["key"]) == (
            "Stock-out A-01-03",
            "critical",
            "A-01-03",
        )
        assert alert["escalated_at"] is not None


class Always(random.Random):
    """Every coin toss comes up "yes"."""

    def random(self) -> float:
        return 0.0


def test_demo_activity_picks_in_every_warehouse(db):
    load_demo_data()
    before = sum(Bin.objects.values_list("stock", flat=True))

    waves = services.simulate_demo_activity(random.Random(8812))

    assert {w.warehouse_id for w in waves} == set(
        Warehouse.objects.filter(code__in=["SH01", "HH02"]).values_list("pk", flat=True)
    )
    assert sum(Bin.objects.values_list("stock", flat=True)) < before


def test_demo_activity_replenishes_only_bins_negative_for_a_while(warehouse, bins):
    services.run_pick_wave(warehouse=warehouse, picks={"A-01-03": 18})
    services.simulate_demo_activity(Always(), replenish_after=timedelta(minutes=2))
    assert Bin.objects.get(code="A-01-03").stock < 0  # too recent: the rule must see it first

    services.simulate_demo_activity(Always(), replenish_after=timedelta(0))

    assert Bin.objects.get(code="A-01-03").stock >= 20 - 18  # replenished, then maybe picked


def test_pick_waves_are_scheduled_only_for_the_demo():
    assert "demo-pick-wave" not in settings.CELERY_BEAT_SCHEDULE
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.CELERY_BEAT_SCHEDULE['demo-pick-wave']['task'])"
    )
    env = {**os.environ, "WMS_DEMO_PICK_WAVES": "1", "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(settings.BASE_DIR),
        timeout=60,
        check=True,
    )

    assert result.stdout.strip() == "inventory.tasks.demo_pick_wave"
