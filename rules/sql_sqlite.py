"""The SQLite sandbox of SQL rules: an authorizer on the connection while the rule's query runs.

SQLite asks the authorizer about every table column read, function called and statement kind
while it prepares a statement; a denial makes the statement fail with "not authorized". Setting
or removing an authorizer expires the connection's prepared statements, so a statement prepared
before (without it) is prepared again, and Django's own statements after (with none).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .sql_policy import SQLITE_ALLOWED_FUNCTIONS, TABLES_HELP, table_allowed

# Statement kinds the authorizer names, for messages (SQLITE_INSERT -> "INSERT").
_ACTION_NAMES = {
    value: name.removeprefix("SQLITE_").replace("_", " ")
    for name, value in vars(sqlite3).items()
    if name.startswith("SQLITE_")
    and isinstance(value, int)
    and name not in {"SQLITE_OK", "SQLITE_DENY", "SQLITE_IGNORE"}
    and not name.startswith(("SQLITE_LIMIT", "SQLITE_DBCONFIG"))
}


class RuleAuthorizer:
    """Allows SELECT, WITH RECURSIVE, reads of allowed tables and allowed functions; nothing
    else. Keeps the reason for the first refusal, for the message shown to the rule's author."""

    def __init__(self) -> None:
        self.refusal = ""

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            if arg1 is not None and table_allowed(arg1):
                return sqlite3.SQLITE_OK
            return self._deny(f"The query may not read the table {arg1}. {TABLES_HELP}")
        if action == sqlite3.SQLITE_FUNCTION:
            if arg2 is not None and arg2.lower() in SQLITE_ALLOWED_FUNCTIONS:
                return sqlite3.SQLITE_OK
            return self._deny(
                f"The query may not call the function {arg2}(): SQL rules may call plain "
                f"functions only (such as count, sum, coalesce, lower, substr, json_object, "
                f"datetime)."
            )
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            # SQLite's first use of a table-valued function (json_each, pragma_table_info)
            # registers it in the schema.
            return self._deny(
                "The query may not use table-valued functions (json_each, pragma_…) on SQLite."
            )
        word = _ACTION_NAMES.get(action, f"operation {action}")
        return self._deny(f"{word} is not allowed in a rule's query: it may only read (SELECT).")

    def _deny(self, reason: str) -> int:
        if not self.refusal:
            self.refusal = reason
        return sqlite3.SQLITE_DENY


@contextmanager
def sandbox(raw: sqlite3.Connection) -> Iterator[RuleAuthorizer]:
    """The authorizer is on the connection inside the block, and removed however it ends."""
    authorizer = RuleAuthorizer()
    raw.set_authorizer(authorizer)
    try:
        yield authorizer
    finally:
        raw.set_authorizer(None)
