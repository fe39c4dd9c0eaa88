"""The read model of notifications: one package owns it (README "The read model").

- `layout`: the fixed KEYS layout of a warehouse (the same positions in every script);
- `lua/read_model.lua`: the prelude, the only definitions of what is live, visible and read
  for a user, the cursor of a change and the unread tallies;
- `lua/<operation>.lua`: one short script per operation, composed with its preludes by name
  (config/lua_compose.py);
- `scripts`: those scripts, built once; `replies`: their replies decoded by name;
- `views`, `changes`, `delivery`: the Python that calls them.
"""

from pathlib import Path

from config.lua_compose import Prelude, register

PRELUDE = register(
    Prelude("read_model", Path(__file__).resolve().parent / "lua" / "read_model.lua")
)

# Cursors are now_ms * 1024 (+ a sequence within the millisecond): read_model.lua take_cursor.
CURSOR_PER_MS = 1024


def cursor_at(ms: int) -> int:
    """The smallest cursor a notification created at `ms` can have."""
    return int(ms) * CURSOR_PER_MS
