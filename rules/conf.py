"""The rules app's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

# --- Rules -------------------------------------------------------------------------------
# Beat asks "which rules are due?" this often; each rule's own interval decides whether it runs.
RULES_TICK_SECONDS = env.float("RULES_TICK_SECONDS", default=15.0)
# A condition that persists is notified again only after this long (a reminder); when it
# clears and comes back it is notified at once. Python rules may set their own.
RULES_DEDUP_COOLDOWN_SECONDS = env.int("RULES_DEDUP_COOLDOWN_SECONDS", default=24 * 3600)
# SQL rules: time limit per query, most rows read per run, and the database alias they read
# (a replica, if the site has one).
RULES_SQL_TIMEOUT_SECONDS = env.float("RULES_SQL_TIMEOUT_SECONDS", default=10.0)
RULES_SQL_MAX_ROWS = env.int("RULES_SQL_MAX_ROWS", default=1000)
# The most a rule's result may bring back in all (bytes of text), and, on SQLite, the longest
# value (text or blob) its query may build (sqlite3_limit LENGTH).
RULES_SQL_MAX_RESULT_BYTES = env.int("RULES_SQL_MAX_RESULT_BYTES", default=4 * 1024 * 1024)
RULES_SQL_MAX_VALUE_BYTES = env.int("RULES_SQL_MAX_VALUE_BYTES", default=1024 * 1024)
# PostgreSQL: the rules role's session (set at every run; create_rules_sql_role sets them on
# the role too): lock and idle-in-transaction timeouts, memory per sort or hash, temporary files.
RULES_SQL_LOCK_TIMEOUT_MS = env.int("RULES_SQL_LOCK_TIMEOUT_MS", default=1000)
RULES_SQL_WORK_MEM = env("RULES_SQL_WORK_MEM", default="16MB")
RULES_SQL_TEMP_FILE_LIMIT = env("RULES_SQL_TEMP_FILE_LIMIT", default="64MB")
RULES_SQL_DATABASE = env("RULES_SQL_DATABASE", default="default")
# More tables (shell-style patterns, no schema) SQL rules may not read. Denied anyway: every
# installed app's tables (users, groups and permissions, API tokens, login attempts, this
# product's own) but those an app opens to rules as business data, and Django's own (sessions,
# the admin log, content types, migrations): rules/sql_policy.py.
RULES_SQL_DENIED_TABLES = env.list("RULES_SQL_DENIED_TABLES", default=[])
# If set, SQL rules may read only tables matching these patterns (and not denied).
RULES_SQL_ALLOWED_TABLES = env.list("RULES_SQL_ALLOWED_TABLES", default=[])
# PostgreSQL: SQL rules connect as this role, which may only SELECT the allowed tables
# (`manage.py create_rules_sql_role` creates it and grants exactly that).
RULES_SQL_ROLE = env("RULES_SQL_ROLE", default="wms_rules")
RULES_SQL_ROLE_PASSWORD = env("RULES_SQL_ROLE_PASSWORD", default="")
# A run holds its rule this long at most, so a crashed worker never blocks the rule for good.
RULES_LOCK_SECONDS = env.int("RULES_LOCK_SECONDS", default=600)
# Names of Python rules that must not run on their own (run_rules --rule still runs them).
RULES_DISABLED = env.list("RULES_DISABLED", default=[])
# The admin's dry runs run in a Celery worker on the `rules` queue (rules.tasks).
# One no worker has started this long after the press is failed (is a worker consuming the
# queue?); one that started and has not finished by its time limit plus the margin is failed
# too (its worker died), so no dry run shows "running" for ever.
RULES_DRY_RUN_WAIT_SECONDS = env.float("RULES_DRY_RUN_WAIT_SECONDS", default=120.0)
RULES_DRY_RUN_MARGIN_SECONDS = env.float("RULES_DRY_RUN_MARGIN_SECONDS", default=30.0)
