"""What an SQL rule may read and call: table patterns from settings, function lists, a parser.

The database enforces these (SQLite: an authorizer, see sql_sqlite; PostgreSQL: a role that can
only SELECT the allowed tables, see sql_postgresql); this module only says what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from functools import cache
from typing import Any, NamedTuple

from django.apps import apps
from django.conf import settings
from sqlparse import tokens as T
from sqlparse.sql import Statement

# Tables a rule never reads, whatever the settings say: the database's own catalogue (it names
# every table) and SQLite's table-valued PRAGMA functions (they describe the schema).
ALWAYS_DENIED_TABLES = ("sqlite_*", "pragma_*")
# Django's own tables, which no app's label starts: sessions, the admin log, content types,
# migrations.
FRAMEWORK_TABLES = ("django_*",)


@cache
def app_tables() -> tuple[str, ...]:
    """Every installed app's tables: `<label>_*` (tables it adds later too) and each model's
    own table, whatever its name. Users, groups and permissions, API tokens, login attempts and
    this product's own tables are among them; an app whose AppConfig says
    `sql_rules_may_read = True` (its tables are business data, as the demo WMS's inventory) is
    left out. A new app is denied without a list to edit."""
    patterns: list[str] = []
    for config in apps.get_app_configs():
        if getattr(config, "sql_rules_may_read", False):
            continue
        patterns.append(f"{config.label}_*")
        patterns += [model._meta.db_table for model in config.get_models(include_auto_created=True)]
    return tuple(patterns)


# SQLite functions a rule may call: pure functions of their arguments. Everything else is
# refused by the authorizer, notably regexp (Django registers it as a Python function, which
# holds the interpreter and which the time limit cannot interrupt: '^(a|a)*$' ran 39 s against
# a limit of 10), load_extension, fts3_tokenizer, randomblob and zeroblob
# (memory), sqlite_* (build details) and functions an application registered on the connection.
SQLITE_ALLOWED_FUNCTIONS = frozenset(
    {
        # aggregates and window functions
        *("count", "sum", "total", "min", "max", "avg", "group_concat", "string_agg"),
        *("json_group_array", "json_group_object"),
        *("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile"),
        *("lag", "lead", "first_value", "last_value", "nth_value"),
        # text, numbers, NULL handling
        *("abs", "char", "coalesce", "concat", "concat_ws", "format", "printf", "glob", "like"),
        *("hex", "unhex", "ifnull", "iif", "instr", "length", "octet_length", "lower", "upper"),
        *("ltrim", "rtrim", "trim", "nullif", "quote", "replace", "round", "sign", "substr"),
        *("substring", "typeof", "unicode", "random"),
        *("ceil", "ceiling", "floor", "exp", "ln", "log", "log10", "log2", "mod", "pi", "pow"),
        *("power", "sqrt", "trunc"),
        # dates and times
        *("date", "time", "datetime", "julianday", "strftime", "unixepoch", "timediff"),
        # JSON (json_each / json_tree are table-valued: refused, they touch the schema)
        *("json", "json_array", "json_array_length", "json_extract", "json_insert"),
        *("json_object", "json_patch", "json_remove", "json_replace", "json_set", "json_type"),
        *("json_valid", "json_quote", "json_error_position", "json_pretty", "->", "->>"),
    }
)

# Functions refused on any database, checked in the query's text at save and at run time: on
# PostgreSQL a second line behind the role, which cannot stop e.g. pg_advisory_lock or
# pg_cancel_backend of its own sessions; on SQLite a clearer message before the authorizer's.
DENIED_FUNCTIONS = (
    # other sessions, locks that outlive the query, settings and the server's process
    *("pg_terminate_backend", "pg_cancel_backend", "pg_advisory*", "pg_try_advisory*"),
    *("set_config", "pg_reload_conf", "pg_rotate_logfile", "pg_logfile_rotate", "pg_promote"),
    *("pg_sleep*", "pg_notify", "pg_switch_wal", "pg_create_restore_point", "pg_backup_*"),
    *("pg_start_backup", "pg_stop_backup", "pg_wal_replay_*", "pg_stat_reset*"),
    *("pg_log_backend_memory_contexts", "pg_export_snapshot", "pg_import_system_collations"),
    *("pg_create_*replication_slot", "pg_drop_replication_slot", "pg_copy_*_replication_slot"),
    *("pg_replication_*", "pg_logical_*"),
    # files, large objects and other databases
    *("pg_read_file", "pg_read_binary_file", "pg_ls_*", "pg_stat_file", "pg_file_*", "lo_*"),
    *("dblink*",),
    # functions that run SQL given as text, which no check of this text could see
    *("query_to_xml*", "cursor_to_xml*", "table_to_xml*", "schema_to_xml*", "database_to_xml*"),
    # writes (a read-only transaction refuses them too)
    *("nextval", "setval", "txid_current", "pg_current_xact_id"),
    # SQLite: extensions and files
    *("load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"),
)

TABLES_HELP = (
    "SQL rules may read business tables only, not users, tokens, sessions, the admin log or "
    "this product's own tables (settings RULES_SQL_DENIED_TABLES and RULES_SQL_ALLOWED_TABLES)."
)


def table_allowed(name: str) -> bool:
    """Whether a rule may read the table (or view) of this name, schema left out."""
    table = name.lower().rsplit(".", 1)[-1].strip('"')
    denied = (*ALWAYS_DENIED_TABLES, *FRAMEWORK_TABLES, *app_tables())
    if _matches(table, (*denied, *settings.RULES_SQL_DENIED_TABLES)):
        return False
    allowed = settings.RULES_SQL_ALLOWED_TABLES
    return not allowed or _matches(table, allowed)


def function_denied(name: str) -> bool:
    return _matches(name.lower(), DENIED_FUNCTIONS)


def called_functions(statement: Statement) -> Iterator[str]:
    """The names of the functions the statement calls: every name followed by "(".

    Comments and white space between a name and its "(" are skipped, schema prefixes dropped
    and quoted names unquoted, so pg_catalog."pg_sleep" /* */ (1) is pg_sleep. Keywords such
    as IN or VALUES come out too; that is harmless for a deny list. Unicode-escaped names
    (U&"...") come out as "U&" so that they can be refused: their spelling is not their name.
    """
    words = [t for t in statement.flatten() if not (t.is_whitespace or t.ttype in T.Comment)]
    for index, token in enumerate(words):
        if not token.match(T.Punctuation, "(") or index == 0:
            continue
        before = words[index - 1]
        if before.ttype in T.Name or before.ttype in T.Keyword:
            yield before.value.lower()
        elif before.ttype in T.String.Symbol:
            ampersand = words[index - 2] if index >= 2 else None
            if ampersand is not None and ampersand.match(T.Operator, "&"):
                yield "U&"
            else:
                yield before.value.strip('"`[]').lower()


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern.lower()) for pattern in patterns)


# PostgreSQL functions a rule may call: pure functions of their arguments (the rules role
# cannot be trusted to stop the rest: PUBLIC may execute pg_advisory_lock, set_config,
# pg_notify, pg_sleep, and functions such as ts_stat or ts_rewrite run SQL given as text,
# which no check of the query's text could see). The names are checked on PostgreSQL's own
# parse tree (pglast), whatever their spelling or schema; anything else is refused.
POSTGRESQL_ALLOWED_FUNCTIONS = frozenset(
    {
        # aggregates and window functions
        *("count", "sum", "min", "max", "avg", "string_agg", "array_agg", "bool_and"),
        *("bool_or", "every", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg"),
        *("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile"),
        *("lag", "lead", "first_value", "last_value", "nth_value"),
        # text
        *("lower", "upper", "initcap", "length", "char_length", "character_length"),
        *("octet_length", "substr", "substring", "left", "right", "btrim", "ltrim", "rtrim"),
        *("trim", "replace", "translate", "concat", "concat_ws", "format", "position"),
        *("strpos", "split_part", "starts_with", "reverse", "overlay", "md5", "quote_literal"),
        *("lpad", "rpad"),
        *("quote_nullable", "to_char", "to_number", "to_date", "to_timestamp"),
        # numbers
        *("abs", "round", "trunc", "ceil", "ceiling", "floor", "mod", "power", "pow", "sqrt"),
        *("sign", "div", "exp", "ln", "log", "log10", "pi", "width_bucket"),
        # dates and times
        *("now", "date_trunc", "date_part", "extract", "age", "timezone", "make_date"),
        *("make_time", "make_timestamp", "make_timestamptz", "make_interval", "date_bin"),
        *("statement_timestamp", "transaction_timestamp", "clock_timestamp", "isfinite"),
        # JSON
        *("to_json", "to_jsonb", "row_to_json", "json_build_object", "jsonb_build_object"),
        *("json_build_array", "jsonb_build_array", "json_object", "jsonb_object"),
        *("json_extract_path", "jsonb_extract_path", "json_extract_path_text"),
        *("jsonb_extract_path_text", "json_typeof", "jsonb_typeof", "json_array_length"),
        *("jsonb_array_length", "json_strip_nulls", "jsonb_strip_nulls", "jsonb_set"),
        *("jsonb_insert", "jsonb_pretty"),
        # arrays and rows
        *("array_length", "cardinality", "array_to_string", "string_to_array"),
        *("array_position", "array_positions", "array_append", "array_prepend", "array_cat"),
        *("unnest", "generate_series"),
    }
)


# PostgreSQL's catalogue: every role may read it (PostgreSQL grants it to PUBLIC, and a grant
# to PUBLIC cannot be taken from one role), so the rules role sees the names of every table and
# column, and row counts. A rule's query may not name it; docs/guide/rules.md, "What SQL rules
# may read".
# Schemas pg_* (pg_catalog, pg_toast, pg_temp...) count as well.
POSTGRESQL_CATALOGUE_SCHEMAS = frozenset({"pg_catalog", "information_schema"})


class PostgresqlNames(NamedTuple):
    """What a query names, as PostgreSQL's own parser (pglast) reads it."""

    functions: list[str]  # every function it calls, schema left out
    # The catalogue relations it reads (pg_class, information_schema.columns, ...) as written;
    # a name starting pg_ counts without its schema too: pg_catalog is searched first.
    catalogue: list[str]


def postgresql_names(text: str) -> PostgresqlNames:
    """The functions and catalogue relations the query names; ValueError when the text does
    not parse as one statement."""
    from pglast import parse_sql
    from pglast.parser import ParseError
    from pglast.visitors import Visitor

    class Names(Visitor):
        def __init__(self) -> None:
            self.found = PostgresqlNames(functions=[], catalogue=[])

        def visit_FuncCall(self, ancestors: Any, node: Any) -> None:
            self.found.functions.append(str(node.funcname[-1].sval).lower())

        def visit_RangeVar(self, ancestors: Any, node: Any) -> None:
            schema = (node.schemaname or "").lower()
            table = str(node.relname).lower()
            if (
                schema in POSTGRESQL_CATALOGUE_SCHEMAS
                or schema.startswith("pg_")
                or (not schema and table.startswith("pg_"))
            ):
                self.found.catalogue.append(f"{schema}.{table}" if schema else table)

    try:
        tree = parse_sql(text)
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    if len(tree) != 1:
        raise ValueError("not one statement")
    names = Names()
    names(tree)
    return names.found
