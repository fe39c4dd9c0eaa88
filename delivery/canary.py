"""The canary's message type and the inbox of its own (SPEC 16), both made by the
migrations: a type nobody subscribes to (`internal`), published into the inbox of a user
that cannot sign in, so a canary reaches no person."""

from __future__ import annotations

from django.contrib.auth.models import User

from directory import holdings

CANARY = "CANARY"
USERNAME = "wms-canary"


def _load() -> int:
    """The canary user's id; 0 (no user has it) when there is none, so that "none" is held
    too and the stream hub does not ask the database again at every event."""
    found = User.objects.filter(username=USERNAME).values_list("pk", flat=True).first()
    return found or 0


# The canary user's id, held per process: the stream hub tells canaries by their one inbox.
CANARY_USER = holdings.declare("delivery.canary_user", models=("auth.User",), load=_load)


def user() -> User:
    """The canary user (its inbox is the canaries' own), with its message type: both made by
    the migrations, and made again here if someone deleted them."""
    from subscriptions.models import MessageType

    MessageType.objects.get_or_create(
        code=CANARY,
        defaults={
            "name": "投递探针",
            "name_en": "Delivery canary",
            "default_ttl_seconds": 3600,
            "internal": True,
        },
    )
    found, created = User.objects.get_or_create(username=USERNAME, defaults={"is_active": False})
    if created:
        found.set_unusable_password()
        found.save(update_fields=["password"])
    return found


def inbox_of(user_id: int | None) -> frozenset[str]:
    """The inboxes a canary event names: its one inbox (none without a canary user)."""
    return frozenset({f"u:{user_id}"}) if user_id else frozenset()
