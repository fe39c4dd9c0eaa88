"""The text checks behind the database's sandbox: denied function calls are found however
they are spelt (the same on SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from rules import sql

COLUMNS = "1 AS warehouse_id, 'x' AS title, '' AS body"


@pytest.mark.parametrize(
    ("query", "name"),
    [
        (f"SELECT {COLUMNS}, pg_terminate_backend(12345) AS key", "pg_terminate_backend"),
        (f"SELECT {COLUMNS} WHERE pg_advisory_lock(42) IS NOT NULL", "pg_advisory_lock"),
        (f"SELECT {COLUMNS} FROM pg_try_advisory_xact_lock(1) AS l", "pg_try_advisory_xact_lock"),
        (f"SELECT {COLUMNS}, pg_catalog.pg_cancel_backend(1) AS key", "pg_cancel_backend"),
        (f'SELECT {COLUMNS}, pg_catalog."pg_sleep" /* nap */ (10) AS key', "pg_sleep"),
        (f"SELECT {COLUMNS}, SET_CONFIG('role', 'postgres', true) AS key", "set_config"),
        (f"SELECT {COLUMNS}, pg_read_file('/etc/passwd') AS key", "pg_read_file"),
        (f"SELECT {COLUMNS} FROM pg_ls_dir('.') AS d", "pg_ls_dir"),
        (f"SELECT {COLUMNS}, lo_import('/etc/passwd') AS key", "lo_import"),
        (f"SELECT {COLUMNS} FROM dblink('dbname=x', 'select 1') AS t(x int)", "dblink"),
        (
            f"SELECT {COLUMNS}, query_to_xml('select * from auth_user', true, true, '') AS key",
            "query_to_xml",
        ),
        (f"SELECT {COLUMNS}, pg_reload_conf() AS key", "pg_reload_conf"),
        (f"SELECT {COLUMNS}, load_extension('x.so') AS key", "load_extension"),
        (
            f"WITH x AS (SELECT pg_advisory_lock(42)) SELECT {COLUMNS} FROM x",
            "pg_advisory_lock",
        ),
    ],
)
def test_denied_functions_are_refused_in_the_text(query, name):
    with pytest.raises(sql.SqlRuleError, match=rf"may not call the function {name}\(\)"):
        sql.check_query(query)


def test_unicode_escaped_names_are_refused():
    with pytest.raises(sql.SqlRuleError, match="Unicode-escaped names"):
        sql.check_query(f'SELECT {COLUMNS}, U&"pg\\005fsleep"(1) AS key')


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT {COLUMNS}, current_setting('TimeZone') AS key",
        f"SELECT {COLUMNS}, lower(replace('a', 'b', 'c')) AS key WHERE 1 IN (1, 2)",
        f"SELECT {COLUMNS}, 'pg_sleep(1)' AS key",  # a string, not a call
    ],
)
def test_harmless_functions_and_strings_pass(query):
    assert sql.check_query(query) == query


@pytest.mark.parametrize(
    ("query", "name"),
    [
        (f"SELECT {COLUMNS}, attname AS key FROM pg_attribute", "pg_attribute"),
        (f"SELECT {COLUMNS} FROM pg_catalog.pg_class", "pg_catalog.pg_class"),
        (f'SELECT {COLUMNS} FROM "pg_catalog"."pg_stats"', "pg_catalog.pg_stats"),
        (f"SELECT {COLUMNS}, column_name AS key FROM information_schema.columns", None),
        (f"SELECT {COLUMNS} FROM inventory_bin b JOIN pg_stat_user_tables s ON true", None),
        (f"SELECT {COLUMNS} WHERE EXISTS (TABLE pg_roles)", "pg_roles"),
    ],
)
def test_rules_on_postgresql_may_not_read_the_catalogue(query, name):
    """The rules role can read PostgreSQL's catalogue (every role can: docs/guide/rules.md,
    *What SQL rules may read*); a rule's query may not name it."""
    with pytest.raises(sql.SqlRuleError, match="may not read the database's catalogue") as caught:
        sql.check_query(query, vendor="postgresql")
    if name:
        assert f"({name})" in str(caught.value)


def test_business_tables_are_not_the_catalogue():
    query = f"SELECT {COLUMNS}, p.code AS key FROM inventory_bin p, public.inventory_bin q"
    assert sql.check_query(query, vendor="postgresql") == query


def test_every_table_of_this_product_is_denied_to_rules():
    """SQL rules read the WMS's business tables only: a new app's tables (notices, actions,
    the outbox, ...) are denied as soon as it exists; only the demo WMS's own are readable."""
    from django.apps import apps

    from rules.sql_policy import table_allowed

    business = {"inventory"}  # the demo WMS's tables, which its SQL rule reads
    readable = sorted(
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_label not in business and table_allowed(model._meta.db_table)
    )
    assert readable == []


def test_every_installed_app_is_denied_to_rules_unless_it_opens_its_tables():
    """The denied tables come from the apps, not a list kept by hand: every installed app's
    tables, present and future (`<label>_*`), are denied, unless its AppConfig says they are
    business data (`sql_rules_may_read`), as the demo WMS's inventory does."""
    from django.apps import apps

    from rules.sql_policy import table_allowed

    opened = {
        config.label
        for config in apps.get_app_configs()
        if getattr(config, "sql_rules_may_read", False)
    }
    assert opened == {"inventory"}
    readable = sorted(
        config.label
        for config in apps.get_app_configs()
        if config.label not in opened and table_allowed(f"{config.label}_table_added_later")
    )
    assert readable == []
    assert table_allowed("inventory_bin")
    assert not table_allowed("django_session")  # Django's own tables belong to no app
