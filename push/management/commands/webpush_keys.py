"""manage.py webpush_keys: print a new VAPID key pair for the environment."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from push import keys


class Command(BaseCommand):
    help = (
        "Print a new VAPID key pair (base64url) as environment lines for "
        "WEB_PUSH_VAPID_PRIVATE_KEY and WEB_PUSH_VAPID_PUBLIC_KEY. Browsers subscribed with "
        "the previous public key must subscribe again."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        pair = keys.generate()
        self.stdout.write(f"WEB_PUSH_VAPID_PRIVATE_KEY={pair.private_key}")
        self.stdout.write(f"WEB_PUSH_VAPID_PUBLIC_KEY={pair.public_key}")
