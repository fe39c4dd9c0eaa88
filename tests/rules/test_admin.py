"""The SQL rule admin: validation on save, last run columns, dry run and run now."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.urls import reverse

from inventory.models import Bin
from rules import sources, tasks
from rules.models import SqlRule, SqlRuleDryRun
from tests.rules_sql_role import RULES_READ_COMMITTED_DATA
from tests.settings import REDIS_SERVER

from .conftest import OK_QUERY

pytestmark = RULES_READ_COMMITTED_DATA

CHANGELIST = "/admin/rules/sqlrule/"


@pytest.fixture
def staff(admin_client):
    return admin_client


@pytest.fixture
def negative_bins(warehouse):
    Bin.objects.create(warehouse=warehouse, code="A-01-03", stock=-12, last_wave=8812)
    Bin.objects.create(warehouse=warehouse, code="A-01-04", stock=-2, last_wave=8812)


def form(rep_notice, query: str, **extra) -> dict:
    return {
        "name": "Negative stock",
        "description": "",
        "message_type": rep_notice.pk,
        "query": query,
        "interval_seconds": 60,
        **extra,
    }


def test_saving_a_query_that_writes_shows_a_clear_error(staff, rep_notice):
    response = staff.post(f"{CHANGELIST}add/", form(rep_notice, "DELETE FROM inventory_bin"))

    assert response.status_code == 200
    assert (
        "DELETE is not allowed: a rule&#x27;s query may only read (SELECT)."
        in response.content.decode()
    )
    assert not SqlRule.objects.exists()


def test_saving_a_query_missing_columns_shows_a_clear_error(staff, rep_notice):
    response = staff.post(
        f"{CHANGELIST}add/", form(rep_notice, "SELECT warehouse_id FROM inventory_bin")
    )

    assert "The query does not return title and body." in response.content.decode()


def test_a_valid_rule_is_saved_and_the_list_shows_its_last_run(staff, rep_notice, sql_rule):
    response = staff.post(f"{CHANGELIST}add/", form(rep_notice, OK_QUERY))
    assert response.status_code == 302
    SqlRule.objects.update(last_error="The query ran longer than the limit")

    page = staff.get(CHANGELIST, {"last_run": "failed", "q": "inventory_bin"}).content.decode()

    assert "Negative stock" in page
    assert "The query ran longer than the limit" in page
    assert "Result count" in page
    assert "60 s" in page


def test_the_dry_run_action_previews_the_alerts_without_sending(
    staff, sql_rule, negative_bins, worker_runs_dry_runs
):
    rule = sql_rule()

    response = staff.post(CHANGELIST, {"action": "dry_run", "_selected_action": [rule.pk]})

    assert response.status_code == 302
    waiting = staff.get(response["Location"]).content.decode()
    assert "Waiting for a worker (asked for by admin at " in waiting
    assert 'http-equiv="refresh"' in waiting
    assert worker_runs_dry_runs() == 1
    page = staff.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' not in page
    assert "Replenish A-01-03" in page
    assert "Stock is -2" in page
    assert "SH01" in page
    assert "2 alerts: 2 would be sent" in page
    rule.refresh_from_db()
    assert rule.last_run_at is None  # nothing recorded, nothing sent


def test_the_change_page_has_the_dry_run_button_of_the_rule(
    staff, sql_rule, negative_bins, worker_runs_dry_runs
):
    rule = sql_rule(is_active=False)
    dry_run_url = reverse("admin:rules_sqlrule_dry_run", args=[rule.pk])
    change_page = staff.get(f"{CHANGELIST}{rule.pk}/change/").content.decode()
    assert f'<form method="post" action="{dry_run_url}">' in change_page
    assert "No dry run of this rule yet." in staff.get(dry_run_url).content.decode()

    staff.post(dry_run_url)
    worker_runs_dry_runs()

    assert "Replenish A-01-04" in staff.get(dry_run_url).content.decode()  # its latest
    assert "passed (" in staff.get(f"{CHANGELIST}{rule.pk}/change/").content.decode()


def test_a_dry_run_shows_the_error_of_a_broken_rule(staff, sql_rule, worker_runs_dry_runs):
    rule = sql_rule("SELECT warehouse_id, code AS title, '' AS body FROM gone", clean=False)

    response = staff.post(CHANGELIST, {"action": "dry_run", "_selected_action": [rule.pk]})
    worker_runs_dry_runs()

    page = staff.get(response["Location"]).content.decode()
    assert "The rule failed: The database refused the query:" in page
    assert "gone" in page
    assert "Failed (asked for by admin" in page


def test_run_now_is_queued_for_a_worker_which_sends_and_records(
    staff, sql_rule, negative_bins, rita, warehouse, inbox
):
    rule = sql_rule()
    broker = REDIS_SERVER.client()

    response = staff.post(
        CHANGELIST, {"action": "run_now", "_selected_action": [rule.pk]}, follow=True
    )

    assert "Queued 1 rule to run in a worker" in response.content.decode()
    assert inbox(rita, warehouse) == []  # the request ran nothing
    assert broker.llen(tasks.RULES_QUEUE) == 1
    raw = broker.rpop(tasks.RULES_QUEUE)  # taken, as a worker takes it
    assert isinstance(raw, bytes)
    message = json.loads(raw)
    assert message["headers"]["task"] == tasks.run_sql_rules_now.name
    (summary,) = tasks.run_sql_rules_now([rule.pk])  # what the worker does with it
    assert "2 alerts: 2 sent to 2 inboxes" in summary
    assert len(inbox(rita, warehouse)) == 2
    rule.refresh_from_db()
    assert rule.last_result_count == 2
    assert rule.last_error == ""


AGGREGATE = {"sqlite": "group_concat", "postgresql": "string_agg"}[connection.vendor]
LEAK = (
    f"SELECT 1 AS warehouse_id, t.key AS title, (SELECT {AGGREGATE}(username || '=' || "
    f"password, ' ') FROM auth_user) AS body FROM authtoken_token t"
)


def test_a_rule_reading_tokens_and_password_hashes_cannot_be_saved(staff, rep_notice):
    response = staff.post(f"{CHANGELIST}add/", form(rep_notice, LEAK))

    assert response.status_code == 200
    assert "SQL rules may read business tables only" in response.content.decode()
    assert not SqlRule.objects.exists()


def test_the_dry_run_of_a_rule_reading_secrets_shows_none(
    staff, sql_rule, admin_user, worker_runs_dry_runs
):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=admin_user)
    rule = sql_rule(LEAK, clean=False)  # e.g. saved before the sandbox existed

    staff.post(reverse("admin:rules_sqlrule_dry_run", args=[rule.pk]))
    worker_runs_dry_runs()
    page = staff.get(reverse("admin:rules_sqlrule_dry_run", args=[rule.pk]))

    text = page.content.decode()
    assert page.status_code == 200
    assert "The rule failed:" in text
    assert token.key not in text
    assert admin_user.password not in text


@pytest.fixture
def viewer(client, make_user):
    """Staff who may look at SQL rules but not change them."""
    user = make_user("viewer", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_sqlrule"))
    client.force_login(user)
    return client


def test_viewers_may_not_dry_run_or_run_now(viewer, staff, sql_rule, negative_bins):
    rule = sql_rule()
    dry_run_url = reverse("admin:rules_sqlrule_dry_run", args=[rule.pk])
    results = staff.post(dry_run_url)["Location"]  # a dry run staff asked for

    assert viewer.get(f"{CHANGELIST}{rule.pk}/change/").status_code == 200
    assert dry_run_url not in viewer.get(f"{CHANGELIST}{rule.pk}/change/").content.decode()
    assert viewer.get(dry_run_url).status_code == 403
    assert viewer.post(dry_run_url).status_code == 403
    assert viewer.get(results).status_code == 403
    assert SqlRuleDryRun.objects.count() == 1
    for action in ("dry_run", "run_now", "deactivate"):
        response = viewer.post(
            CHANGELIST, {"action": action, "_selected_action": [rule.pk]}, follow=True
        )
        page = response.content.decode()
        assert response.status_code == 200, action
        assert "Select SQL rule to view" in page, action
        assert "would be sent" not in page, action
        assert "Replenish" not in page, action
    rule.refresh_from_db()
    assert rule.last_run_at is None
    assert rule.is_active


def test_a_new_rule_is_live_only_after_its_dry_run_passed(
    staff, rep_notice, negative_bins, worker_runs_dry_runs
):
    """Issue 20: "Is active" was ticked by default and the dry run existed only after saving."""
    query = (
        "SELECT warehouse_id, 'Replenish ' || code AS title, '' AS body FROM inventory_bin "
        "WHERE stock < 0"
    )
    ticked = staff.post(f"{CHANGELIST}add/", form(rep_notice, query, is_active="on"))
    assert ticked.status_code == 200
    assert "only once a dry run of its query has passed" in ticked.content.decode()
    assert not SqlRule.objects.exists()

    assert staff.post(f"{CHANGELIST}add/", form(rep_notice, query)).status_code == 302
    rule = SqlRule.objects.get()
    assert not rule.is_active
    assert not SqlRule._meta.get_field("is_active").default
    staff.post(CHANGELIST, {"action": "activate", "_selected_action": [rule.pk]})
    rule.refresh_from_db()
    assert not rule.is_active  # no dry run yet

    staff.post(reverse("admin:rules_sqlrule_dry_run", args=[rule.pk]))
    staff.post(CHANGELIST, {"action": "activate", "_selected_action": [rule.pk]})
    rule.refresh_from_db()
    assert not rule.is_active  # asked for, not yet run by a worker
    worker_runs_dry_runs()
    staff.post(CHANGELIST, {"action": "activate", "_selected_action": [rule.pk]})
    rule.refresh_from_db()
    assert rule.is_active

    # A changed query needs a dry run of its own before it runs.
    SqlRule.objects.filter(pk=rule.pk).update(query=query + " AND stock < -5")
    rule.refresh_from_db()
    assert rule.is_active
    assert not sources.SqlRuleRunnable(rule).info.is_active
