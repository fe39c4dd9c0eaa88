"""Rules cannot publish what could not be served: NaN and Infinity are refused per alert."""

import pytest

from rules import runner, sql
from rules.domain import AlertStatus

from .conftest import alert

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_python_rule_computing_nan_fails_that_alert_only(make_rule, rita, warehouse, inbox):
    make_rule(
        "ratios",
        [alert(warehouse, "A-01", data={"ratio": float("nan")}), alert(warehouse, "A-02")],
    )

    (run,) = runner.run_due_rules()

    assert [o.status for o in run.outcomes] == [
        AlertStatus.FAILED,
        AlertStatus.SENT,
    ]
    assert "finite" in run.outcomes[0].error
    assert [n["data"]["bin"] for n in inbox(rita, warehouse)] == ["A-02"]


@pytest.mark.parametrize("data", ['{"ratio": NaN}', '{"ratio": -Infinity}'])
def test_an_sql_rules_data_column_refuses_nan(data):
    result = sql.QueryResult(
        columns=("warehouse_id", "title", "body", "data"),
        rows=[(1, "t", "", data)],
        truncated=False,
    )

    with pytest.raises(sql.SqlRuleError, match="Row 1: data is not valid JSON"):
        sql.rows_to_alerts(result)
