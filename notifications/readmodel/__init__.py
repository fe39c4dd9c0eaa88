"""The read model of notifications: one package owns it (docs/architecture/read-model.md).

- `layout`: the fixed KEYS layout of a warehouse (the same positions in every script);
- `lua/read_model/`: the prelude, the only definitions of what is live, visible and read
  for a user, the cursor of a change and the unread tallies;
- `lua/<operation>.lua`: one short script per operation, composed with its preludes by name
  (config/lua_compose.py);
- `scripts`: those scripts, built once; `replies`: their replies decoded by name;
- `views`, `changes`, `delivery`: the Python that calls them.
"""

import hashlib
from collections.abc import Iterable
from pathlib import Path

from config.lua_compose import Prelude, register

PRELUDE = register(Prelude("read_model", Path(__file__).resolve().parent / "lua" / "read_model"))

# Cursors are now_ms * 1024 (+ a sequence within the millisecond): read_model/ take_cursor.
CURSOR_PER_MS = 1024


def route_class(subscribers: Iterable[str]) -> str:
    """The class id of a route: the first 12 hex digits of the SHA-1 of its sorted inboxes
    joined by spaces. Publishing passes it (computed once per subscriber list and cached, so
    no publish pays for it in Redis); read_model/ class_of computes the same for an
    escalated route (tests/notifications/test_readmodel_contract.py pins the pair)."""
    joined = " ".join(sorted(subscribers))
    return hashlib.sha1(joined.encode(), usedforsecurity=False).hexdigest()[:12]


def cursor_at(ms: int) -> int:
    """The smallest cursor a notification created at `ms` can have."""
    return int(ms) * CURSOR_PER_MS
