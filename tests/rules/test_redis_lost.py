"""A rule alert counts as sent only once it reached the subscribers the database says it has:
a Redis that was emptied, or lost subscribers, never swallows a replenishment notice."""

from __future__ import annotations

from notifications import store as notification_store
from rules import alerts, runner, sources, store
from rules.domain import AlertStatus, RuleRun
from subscriptions import keys as subscription_keys

from .conftest import alert


def run(name: str = "shortages") -> RuleRun:
    return runner.run_rule(sources.find_rule(name))


def test_an_alert_raised_right_after_redis_was_emptied_reaches_the_operators(
    redis, make_rule, rita, warehouse, inbox
):
    make_rule(alerts=[alert(warehouse)])
    redis.flushall()  # Redis restarted empty; the reconcile has not run yet

    first = run()

    assert (first.sent, first.recipients) == (1, 1)
    assert [i["title"] for i in inbox(rita, warehouse)] == ["Replenish A-01-03"]
    assert run().sent == 0  # and it is not sent twice


def test_an_alert_that_missed_a_subscriber_is_not_confirmed_and_goes_out_next_run(
    redis, make_rule, rita, role, warehouse, rep_notice, inbox, cold_cache
):
    make_rule(alerts=[alert(warehouse)])
    # A damage Redis cannot notice by itself: the set still holds one member, the wrong one.
    set_key = subscription_keys.subscribers(warehouse.pk, rep_notice.pk)
    redis.srem(set_key, f"r:{role.pk}")
    redis.sadd(set_key, "u:999")

    first = run()

    (outcome,) = first.outcomes
    assert outcome.status is AlertStatus.FAILED
    assert f"not r:{role.pk}" in outcome.error
    assert inbox(rita, warehouse) == []
    second = run()
    assert (second.sent, second.recipients) == (1, 1)
    assert [i["title"] for i in inbox(rita, warehouse)] == ["Replenish A-01-03"]


def test_alerts_left_when_redis_failed_half_way_go_out_on_the_next_run(
    monkeypatch, make_rule, rita, warehouse, other_warehouse, inbox
):
    make_rule(alerts=[alert(warehouse, "A-01-03"), alert(warehouse, "A-01-04")])
    real_publish = alerts.publish

    def unavailable(**kwargs):
        raise notification_store.SubscribersUnavailable("restoring")

    monkeypatch.setattr(alerts, "publish", unavailable)
    assert "Redis is unavailable" in run().error
    monkeypatch.setattr(alerts, "publish", real_publish)

    second = run()

    assert second.sent == 2
    assert sorted(i["title"] for i in inbox(rita, warehouse)) == [
        "Replenish A-01-03",
        "Replenish A-01-04",
    ]


def test_each_alert_is_confirmed_as_soon_as_it_is_published(
    monkeypatch, make_rule, rita, warehouse
):
    """A worker dying after the first publish must not leave it to be sent again."""
    make_rule(alerts=[alert(warehouse, "A-01-03"), alert(warehouse, "A-01-04")])
    real_publish = alerts.publish
    marks_seen = []

    def publish_and_look(**kwargs):
        marks_seen.append(store.marks("py:shortages", warehouse.pk, ["A-01-03"]))
        return real_publish(**kwargs)

    monkeypatch.setattr(alerts, "publish", publish_and_look)
    run()

    # While the second alert was being published, the first was already confirmed (positive).
    assert marks_seen[1]["A-01-03"] > 0
