"""Nothing left behind by rules that no longer exist: the notifications orphan sweep removes
their warehouse keys (it asks this app which rules exist), the rules' own sweep their last runs
(issue 9.4)."""

from __future__ import annotations

import pytest
from django.conf import settings

from config.celery import app
from notifications import cleanup as notification_cleanup
from rules import cleanup, keys, store, tasks
from rules.models import SqlRule

pytestmark = pytest.mark.django_db


def warehouse_keys(redis, warehouse_id: int) -> set[str]:
    return {k.decode() for k in redis.scan_iter(match=f"wms:\\{{wh:{warehouse_id}\\}}:*")}


def test_the_sweep_forgets_last_runs_and_marks_of_rules_that_no_longer_exist(
    warehouse, rep_notice, redis
):
    kept = SqlRule.objects.create(name="kept", message_type=rep_notice, query="SELECT 1")
    deleted = SqlRule.objects.create(name="deleted", message_type=rep_notice, query="SELECT 1")
    deleted_id = deleted.rule_id
    deleted.delete()
    for rule_id in ("py:negative_bin_stock", "py:removed_from_the_code", kept.rule_id, deleted_id):
        store.set_last_run(rule_id, 1)
        store.claim_due(
            rule_id,
            now_ms=1,
            cooldown_seconds=60,
            abandoned_seconds=60,
            keys_by_warehouse={warehouse.pk: ["x"]},
        )

    notification_cleanup.sweep_orphans()  # the warehouse keys (the rules app's owner check)
    report = cleanup.sweep_orphans()  # the last runs

    assert report.last_runs == 2
    assert set(
        store.last_runs(
            ["py:negative_bin_stock", "py:removed_from_the_code", kept.rule_id, deleted_id]
        )
    ) == {"py:negative_bin_stock", kept.rule_id}
    assert warehouse_keys(redis, warehouse.pk) == {
        keys.rule_sent(warehouse.pk, "py:negative_bin_stock"),
        keys.rule_sent(warehouse.pk, kept.rule_id),
    }


def test_beat_runs_the_rules_orphan_sweep(rep_notice, redis, celery_eager):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-rule-orphans"]
    assert entry["task"] == tasks.sweep_rule_orphans.name in app.tasks
    assert entry["schedule"] == settings.ORPHAN_SWEEP_SECONDS
    deleted = SqlRule.objects.create(name="deleted", message_type=rep_notice, query="SELECT 1")
    deleted_id = deleted.rule_id
    store.set_last_run(deleted_id, 1)
    deleted.delete()

    assert tasks.sweep_rule_orphans.delay().get() == {"last_runs": 1}
    assert store.last_runs([deleted_id]) == {}
