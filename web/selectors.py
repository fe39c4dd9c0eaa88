"""Reads the warehouse page needs from the database: which warehouses a user may pick, and
what message types are called in the page's language."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from config.users import User
from subscriptions.models import MessageType, Subscription, Warehouse


@dataclass(frozen=True)
class WarehouseChoice:
    id: int
    code: str
    name: str
    subscribed: bool  # the user, or one of their roles, receives something here

    def as_json(self) -> dict[str, object]:
        return {"id": self.id, "code": self.code, "name": self.name, "subscribed": self.subscribed}


def warehouse_choices_for(*, user: User) -> list[WarehouseChoice]:
    """Every active warehouse, those the user receives notifications in first.

    All active warehouses are offered (an operator may be sent to help out anywhere); the
    subscribed ones come first so that the default choice is one where something arrives.
    """
    subscribed = set(
        Subscription.objects.filter(
            Q(user_id=user.pk) | Q(role__in=user.groups.all()), warehouse__is_active=True
        ).values_list("warehouse_id", flat=True)
    )
    choices = [
        WarehouseChoice(id=wh.pk, code=wh.code, name=wh.name, subscribed=wh.pk in subscribed)
        for wh in Warehouse.objects.filter(is_active=True).order_by("code")
    ]
    return sorted(choices, key=lambda choice: not choice.subscribed)  # stable: code order kept


def message_type_names(*, language: str | None) -> dict[str, str]:
    """Message type code -> its name in `language`, for every type (inactive ones too: their
    notifications live on until they expire), but the product's own (canaries)."""
    types = MessageType.objects.filter(internal=False)
    return {mt.code: mt.display_name(language) for mt in types}
