"""Moving read state from the layout before this package into it (`manage.py
migrate_read_state`, run once after deploying it; CHANGELOG "the read model in one package").

The old layout kept a user's "mark all read" in `watermarks`, their one-by-one marks in
`read:<user id>` and their snoozes' lists in `snoozers` (with `markers`, `readopen` and
`readers` derived from those). lua/upgrade_user.lua moves one user at a time, a bounded batch
of marks per call, through the prelude's own `mark` and `snooze`, so every tally is what the
new layout would have written. What is derived is removed at the end. Running it again finds
nothing to move.

Then each warehouse is counted once (lua/recount.lua): the per-class open counts, the users'
tallies and the holders of watermarks that polls read instead of counting, rebuilt from what
they count; the tallies of the layout before them go. Later runs find the warehouse counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from config import timestamps
from config.redis import as_text, get_redis
from subscriptions.keys import warehouse_prefix

from . import layout, scripts

# The old families, by name: derived ones first; removed once every user is moved.
OLD_HASHES = ("watermarks", "snoozers", "markers", "readopen")
OLD_READERS = "readers"
SCAN_COUNT = 500


def old_key(warehouse_id: int, name: str) -> str:
    return f"{warehouse_prefix(warehouse_id)}:{name}"


def old_read_marks(warehouse_id: int, user_id: int) -> str:
    return f"{warehouse_prefix(warehouse_id)}:read:{int(user_id)}"


@dataclass
class UpgradeReport:
    users: int = 0  # users with state in the old layout
    watermarks: int = 0  # "mark all read" states taken over
    watermarks_kept_new: int = 0  # users who already had state of the new layout (it wins)
    read_marks: int = 0  # notifications marked read one by one again
    snoozes: int = 0  # snoozes taken over (the expired ones are dropped)
    keys_removed: int = 0

    def __str__(self) -> str:
        return (
            f"{self.users} users: {self.watermarks} mark-all states, {self.read_marks} read "
            f"marks, {self.snoozes} snoozes moved; {self.watermarks_kept_new} kept their new "
            f"state; {self.keys_removed} old keys removed"
        )


def old_users(warehouse_id: int) -> set[int]:
    """Every user with read state in the old layout of the warehouse (bounded scans)."""
    client = get_redis()
    users = {
        int(m) for m in client.sscan_iter(old_key(warehouse_id, OLD_READERS), count=SCAN_COUNT)
    }
    for field in client.hscan_iter(old_key(warehouse_id, "watermarks"), count=SCAN_COUNT):
        name = as_text(field[0])
        if not name.startswith("v:"):
            users.add(int(name))
    for field in client.hscan_iter(old_key(warehouse_id, "snoozers"), count=SCAN_COUNT):
        name = as_text(field[0])
        if name.startswith("u:"):
            users.add(int(name[2:]))
    return users


def upgrade_warehouse(warehouse_id: int, *, batch: int = 500) -> UpgradeReport:
    """Move every user's old read state of the warehouse, then remove the old keys."""
    report = UpgradeReport()
    client = get_redis()
    for user_id in sorted(old_users(warehouse_id)):
        report.users += 1
        while True:
            now = timestamps.now_ms()
            left, took, marks, snoozes = scripts.UPGRADE_USER(
                keys=[
                    *layout.warehouse_keys(warehouse_id, now),
                    old_key(warehouse_id, "watermarks"),
                    old_key(warehouse_id, "snoozers"),
                    old_read_marks(warehouse_id, user_id),
                ],
                args=[now, user_id, batch],
            )
            report.read_marks += int(marks)
            report.snoozes += int(snoozes)
            report.watermarks += int(took) == 1
            report.watermarks_kept_new += int(took) == -1
            if int(left) == 0:
                break
        report.keys_removed += int(client.unlink(old_read_marks(warehouse_id, user_id)))
    for name in (*OLD_HASHES, OLD_READERS):
        report.keys_removed += int(client.unlink(old_key(warehouse_id, name)))
    return report


@dataclass
class RecountReport:
    classes: int  # classes counted (-1: counted already, nothing done)
    users: int  # users whose tallies were counted

    def __str__(self) -> str:
        if self.classes < 0:
            return "counts kept"
        return f"counted {self.classes} classes and {self.users} users' tallies"


def recount_warehouse(warehouse_id: int, *, again: bool = False) -> RecountReport:
    """Count the warehouse's read model once (lua/recount.lua; `again`: also when counted
    already). One Redis call, whose work grows with the warehouse's classes, users with
    watermarks, and one-by-one fields and snoozes."""
    now = timestamps.now_ms()
    classes, users = scripts.RECOUNT(
        keys=list(layout.warehouse_keys(warehouse_id, now)), args=[now, "1" if again else "0"]
    )
    return RecountReport(int(classes), int(users))
