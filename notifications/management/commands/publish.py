"""`manage.py publish`: send a notification by hand, e.g. to test a subscription."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.redis import REDIS_UNAVAILABLE
from notifications.services import PublishError, publish


class Command(BaseCommand):
    help = "Publish a notification to the subscribers of a message type in a warehouse."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--type", required=True, dest="message_type", help="Message type code, e.g. REP_NOTICE"
        )
        parser.add_argument("--warehouse", required=True, help="Warehouse code or id, e.g. SH01")
        parser.add_argument("--title", required=True)
        parser.add_argument("--body", default="")
        parser.add_argument("--data", default="{}", help='A JSON object, e.g. \'{"bin": "A-01"}\'')
        parser.add_argument(
            "--ttl",
            type=int,
            default=None,
            dest="ttl_seconds",
            help="Seconds to live (default: the message type's)",
        )
        parser.add_argument(
            "--severity",
            choices=["info", "warning", "critical"],
            default=None,
            help="Default: the message type's default severity",
        )
        parser.add_argument("--key", default=None, help="The alert key, e.g. a bin code")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = json.loads(options["data"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--data is not valid JSON: {exc}") from exc
        try:
            result = publish(
                message_type=options["message_type"],
                warehouse=options["warehouse"],
                title=options["title"],
                body=options["body"],
                data=data,
                ttl_seconds=options["ttl_seconds"],
                severity=options["severity"],
                key=options["key"],
            )
        except PublishError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from exc
        except REDIS_UNAVAILABLE as exc:
            raise CommandError(f"Redis is unreachable: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Published {result.id} to {result.recipients} inbox(es) at "
                f"{result.created_at:%Y-%m-%d %H:%M:%S} UTC."
            )
        )
