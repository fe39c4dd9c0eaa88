"""`manage.py sync_subscriptions`: rebuild the Redis mirror of subscriptions from the database."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.redis import REDIS_UNAVAILABLE
from subscriptions import services


class Command(BaseCommand):
    help = "Rebuild the Redis subscriber sets from the database (atomically per warehouse)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check-only-changed",
            action="store_true",
            dest="reconcile",
            help="Compare first and rewrite only the sets that differ (what the beat task does).",
        )

    def handle(self, *args: Any, reconcile: bool = False, **options: Any) -> None:
        try:
            report = services.reconcile() if reconcile else services.sync_all()
        except REDIS_UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(f"Synced {report}"))
