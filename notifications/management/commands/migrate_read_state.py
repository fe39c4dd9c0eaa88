"""`manage.py migrate_read_state`: move read state from the layout before the read model's
package into it, and count each warehouse's read model once (notifications/readmodel/
upgrade.py), warehouse by warehouse, with progress."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.redis import REDIS_UNAVAILABLE
from notifications.readmodel import upgrade
from subscriptions.models import Warehouse


class Command(BaseCommand):
    help = (
        "Move users' read marks, 'mark all read' and snoozes from the layout before the read "
        "model's package into it, and count each warehouse's unread tallies once (after "
        "deploying; running it again moves and counts nothing)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=500, help="read marks moved per Redis call (500)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        batch = options["batch"]
        if batch < 1:
            raise CommandError("--batch must be at least 1.")
        warehouses = list(Warehouse.objects.order_by("code"))
        if not warehouses:
            self.stdout.write("No warehouses.")
            return
        try:
            for number, warehouse in enumerate(warehouses, start=1):
                report = upgrade.upgrade_warehouse(warehouse.pk, batch=batch)
                counted = upgrade.recount_warehouse(warehouse.pk)
                self.stdout.write(
                    f"[{number}/{len(warehouses)}] {warehouse.code}: {report}; {counted}"
                )
        except REDIS_UNAVAILABLE as exc:
            raise CommandError(
                f"Redis is unreachable: {exc}. What was moved stays moved: run it again."
            ) from exc
        self.stdout.write(self.style.SUCCESS("Read state is in the new layout."))
