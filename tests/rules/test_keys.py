"""Stored keys outlive deploys: the rules' Redis keys must not change by accident."""

from rules import keys


def test_rule_keys():
    assert keys.rule_sent(4, "py:bin_stock") == "wms:{wh:4}:rule:py:bin_stock:sent"
    assert keys.rule_sent(4, "sql:7") == "wms:{wh:4}:rule:sql:7:sent"
    assert keys.rule_alerts(4, "py:bins") == "wms:{wh:4}:rule:py:bins:alerts"
    assert keys.rule_lock("sql:7") == "wms:rules:sql:7:lock"
    assert keys.rule_last_runs() == "wms:rules:last_run"
