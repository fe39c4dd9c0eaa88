"""Python rules: end to end into an inbox, de-duplication, re-firing, failures, schedules."""

from __future__ import annotations

import pytest

from config import timestamps
from rules import Alert, Rule, RuleRegistry, runner, sources, store
from rules.domain import AlertStatus, RuleRun

from .conftest import alert


def run(name: str = "shortages", *, dry_run: bool = False) -> RuleRun:
    return runner.run_rule(sources.find_rule(name), dry_run=dry_run)


def test_a_rule_firing_reaches_a_subscribers_inbox_through_the_api(
    make_rule, rita, warehouse, inbox
):
    make_rule(alerts=[alert(warehouse)])

    (result,) = runner.run_due_rules()

    assert (result.sent, result.recipients, result.error) == (1, 1, "")
    (item,) = inbox(rita, warehouse)
    assert item["message_type"] == "REP_NOTICE"
    assert item["warehouse"] == warehouse.pk
    assert item["title"] == "Replenish A-01-03"
    assert item["body"] == "Stock is -12 after wave 8812"
    assert item["data"] == {"bin": "A-01-03", "qty": -12}
    assert item["read"] is False


def test_the_same_key_is_not_sent_again_while_its_condition_persists(
    make_rule, rita, warehouse, inbox
):
    rule = make_rule(alerts=[alert(warehouse, qty=-12)])
    assert run().sent == 1
    rule.current = [alert(warehouse, qty=-20)]  # worse, but the same condition (same key)

    second = run()

    assert (second.sent, second.duplicates) == (0, 1)
    assert len(inbox(rita, warehouse)) == 1


def test_a_condition_that_clears_and_comes_back_is_sent_again(make_rule, rita, warehouse, inbox):
    rule = make_rule(alerts=[alert(warehouse)])
    run()
    rule.current = []
    assert run().alert_count == 0  # cleared: the bin was replenished
    rule.current = [alert(warehouse, qty=-3)]

    again = run()

    assert again.sent == 1
    assert [i["body"] for i in inbox(rita, warehouse)] == [
        "Stock is -12 after wave 8812",
        "Stock is -3 after wave 8812",
    ]


def test_keys_clear_per_warehouse_and_per_key(make_rule, warehouse, other_warehouse):
    both = [
        alert(warehouse, "A-01-03"),
        alert(warehouse, "A-01-04"),
        alert(other_warehouse, "A-01-03"),
    ]
    rule = make_rule(alerts=both)
    assert run().sent == 3
    rule.current = [alert(warehouse, "A-01-03")]  # the rest cleared
    assert run().duplicates == 1

    rule.current = both

    outcomes = {(o.alert.warehouse_id, o.alert.key): o.status for o in run().outcomes}
    assert outcomes == {
        (warehouse.pk, "A-01-03"): AlertStatus.DUPLICATE,
        (warehouse.pk, "A-01-04"): AlertStatus.SENT,
        (other_warehouse.pk, "A-01-03"): AlertStatus.SENT,
    }


def test_one_run_yielding_a_key_twice_sends_it_once(make_rule, warehouse):
    make_rule(alerts=[alert(warehouse), alert(warehouse, title="Again")])

    result = run()

    assert [o.status for o in result.outcomes] == [AlertStatus.SENT, AlertStatus.DUPLICATE]


def test_a_persisting_condition_is_sent_again_after_the_cooldown(warehouse):
    # The script gets the time as an argument, so the cool-down is tested without sleeping.
    def claim(at_ms: int, *keys: str) -> set[str]:
        return store.claim_due(
            "py:t",
            now_ms=at_ms,
            cooldown_seconds=60,
            abandoned_seconds=600,
            keys_by_warehouse={warehouse.pk: list(keys)},
        )[warehouse.pk]

    t = 1_800_000_000_000
    assert claim(t, "A") == {"A"}
    store.confirm_sent("py:t", warehouse.pk, ["A"], now_ms=t, cooldown_seconds=60)
    assert claim(t + 59_999, "A") == set()
    assert claim(t + 60_000, "A") == {"A"}


def test_cooldown_zero_sends_on_every_run(make_rule, warehouse):
    make_rule(alerts=[alert(warehouse)], cooldown=0)

    assert [run().sent for _ in range(3)] == [1, 1, 1]


def test_an_unconfirmed_claim_of_a_run_that_died_is_sent_again(warehouse):
    def claim(at_ms: int) -> set[str]:
        return store.claim_due(
            "py:t",
            now_ms=at_ms,
            cooldown_seconds=3600,
            abandoned_seconds=600,
            keys_by_warehouse={warehouse.pk: ["A"]},
        )[warehouse.pk]

    t = 1_800_000_000_000
    assert claim(t) == {"A"}  # ... and the run dies before publishing
    assert claim(t + 1000) == set()  # it might still be publishing
    assert claim(t + 600_000) == {"A"}  # abandoned: sent again rather than lost


def test_a_failed_publish_is_retried_on_the_next_run(make_rule, rita, warehouse, inbox):
    make_rule(alerts=[alert(warehouse)])
    warehouse.is_active = False
    # A save, not update(): the directory caches warehouses (docs/architecture/directory.md).
    warehouse.save()

    failed = run()

    assert failed.failed == 1
    assert "inactive" in failed.outcomes[0].error
    assert "1 of 1 alerts could not be sent" in failed.problem()
    warehouse.is_active = True
    warehouse.save()
    assert run().sent == 1
    assert len(inbox(rita, warehouse)) == 1


def test_dry_run_sends_and_claims_nothing(make_rule, rita, warehouse, inbox, redis):
    make_rule(alerts=[alert(warehouse)])

    preview = run(dry_run=True)

    assert [o.status for o in preview.outcomes] == [AlertStatus.WOULD_SEND]
    assert inbox(rita, warehouse) == []
    assert store.last_runs(["py:shortages"]) == {}
    assert run().sent == 1
    assert [o.status for o in run(dry_run=True).outcomes] == [AlertStatus.DUPLICATE]


def test_a_broken_rule_does_not_stop_the_others(make_rule, rita, warehouse, inbox, caplog):
    make_rule("broken", fails_with=RuntimeError("the business table is gone"))
    make_rule("unknown_type", alerts=[alert(warehouse)], message_type="NO_SUCH_TYPE")
    make_rule("works", alerts=[alert(warehouse)])

    runs = {r.rule.name: r for r in runner.run_due_rules()}

    assert runs["broken"].error == "RuntimeError: the business table is gone"
    assert runs["broken"].alert_count is None
    assert runs["unknown_type"].failed == 1
    assert "Unknown message type" in runs["unknown_type"].outcomes[0].error
    assert runs["works"].sent == 1
    assert len(inbox(rita, warehouse)) == 1
    assert "Rule broken failed" in caplog.text  # Python rules' errors go to the log


def test_a_rule_yielding_something_else_than_alerts_fails_clearly(make_rule, warehouse):
    make_rule(alerts=[{"title": "not an Alert"}])

    assert run().error == "TypeError: alerts() yielded dict, not an Alert."


def test_due_rules_follow_each_rules_interval(make_rule, warehouse):
    make_rule("fast", interval=30)
    make_rule("slow", interval=3600)
    assert {r.info.name for r in sources.due_rules()} == {"fast", "slow"}  # never ran: due

    runner.run_due_rules()
    assert sources.due_rules() == []

    store.set_last_run("py:fast", timestamps.now_ms() - 31_000)
    assert [r.info.name for r in sources.due_rules()] == ["fast"]


def test_the_runner_and_the_schedule_read_the_one_clock(make_rule, warehouse, clock):
    make_rule("hourly", interval=3600)
    (first,) = runner.run_due_rules()
    assert sources.due_rules() == []

    clock.move_by(3_601_000)

    assert [r.info.name for r in sources.due_rules()] == ["hourly"]
    (second,) = runner.run_due_rules()
    assert second.started_ms - first.started_ms >= 3_601_000


def test_a_disabled_rule_is_not_due_but_runs_when_named(make_rule, warehouse, settings):
    make_rule(alerts=[alert(warehouse)])
    settings.RULES_DISABLED = ["shortages"]

    assert sources.due_rules() == []
    assert run().sent == 1


def test_an_overlapping_run_of_the_same_rule_is_skipped(make_rule, warehouse):
    make_rule(alerts=[alert(warehouse)])
    token = store.acquire_lock("py:shortages", ttl_seconds=60)
    assert token is not None

    skipped = run()

    assert skipped.skipped
    assert skipped.sent == 0
    store.release_lock("py:shortages", token)
    assert run().sent == 1


def test_a_rule_finds_redis_down_and_says_so(make_rule, warehouse, redis_down):
    make_rule(alerts=[alert(warehouse)])
    shortages = sources.registry.get("shortages")
    assert shortages is not None
    rule = sources.PythonRule(shortages, last_run_ms=None)

    (result,) = runner.run_rules([rule])

    assert result.error.startswith("Redis is unavailable")


def test_an_alert_without_a_key_is_keyed_by_its_title(warehouse):
    assert Alert(warehouse=warehouse, title="Replenish A-01-03").key == "Replenish A-01-03"
    assert Alert(warehouse=warehouse, title="t").warehouse_id == warehouse.pk


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"name": "Has Spaces"}, "name must match"),
        ({"name": "{slot}"}, "name must match"),
        ({"message_type": None}, "message_type"),
        ({"interval_seconds": 0}, "interval_seconds"),
        ({"cooldown_seconds": -1}, "cooldown_seconds"),
    ],
)
def test_the_registry_refuses_badly_declared_rules(attrs, message):
    declared = {"name": "ok", "message_type": "REP_NOTICE", **attrs}

    with pytest.raises(ValueError, match=message):
        RuleRegistry(discover=False).register(type("Bad", (Rule,), declared))


def test_two_rules_may_not_share_a_name():
    registry = RuleRegistry(discover=False)
    registry.register(type("One", (Rule,), {"name": "same", "message_type": "REP_NOTICE"}))

    with pytest.raises(ValueError, match="Two rules are named 'same'"):
        registry.register(type("Two", (Rule,), {"name": "same", "message_type": "REP_NOTICE"}))


def test_the_shipped_rules_are_discovered():
    from rules import registry

    assert registry.get("negative_bin_stock") is not None
