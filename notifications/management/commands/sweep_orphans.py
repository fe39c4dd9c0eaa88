"""`manage.py sweep_orphans`: run the orphan sweeps now (what beat runs) and report each: every
app's that added one (config.orphans.add_sweep: notifications', the chat's, the rules')."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from redis.exceptions import RedisError

from config import orphans


class Command(BaseCommand):
    help = (
        "Remove what deleted warehouses, users, roles, message types, rules and chats left in "
        "Redis, and restore lost chat index entries (SCAN in bounded steps)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=None, help="keys per SCAN call (ORPHAN_SWEEP_BATCH)"
        )

    def handle(self, *args: Any, batch: int | None = None, **options: Any) -> None:
        if batch is not None and batch < 1:
            raise CommandError("--batch must be a positive number.")
        try:
            for label, sweep in orphans.sweeps.items():
                self.stdout.write(f"{label}: {sweep(batch=batch)}")
        except RedisError as exc:
            raise CommandError(f"Redis failed: {exc}") from exc
        self.stdout.write(self.style.SUCCESS("Orphan sweep done."))
