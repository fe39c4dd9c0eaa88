"""`manage.py expire_notifications`: run the expiry sweep now and report what it removed."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.redis import REDIS_UNAVAILABLE
from notifications import services
from subscriptions.models import Warehouse


class Command(BaseCommand):
    help = "Remove expired notifications, their inbox entries and read marks (what beat runs)."

    def handle(self, *args: Any, **options: Any) -> None:
        total = None
        try:
            for warehouse in Warehouse.objects.order_by("code"):
                report = services.expire_warehouse(warehouse.pk)
                self.stdout.write(f"{warehouse.code}: {report}")
                total = report if total is None else total + report
        except REDIS_UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable: {exc}") from exc
        if total is None:
            self.stdout.write("No warehouses.")
        else:
            self.stdout.write(self.style.SUCCESS(f"Total: {total}"))
