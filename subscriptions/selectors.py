"""Reads of subscriptions: what a user receives, and why (for the admin)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from django.db.models import F, Q

from config.users import User

from .models import MessageType, Subscription, Warehouse


class Way(StrEnum):
    """How a notification reaches a user."""

    DIRECTLY = "directly"  # a subscription of the user
    ROLE = "role"  # a subscription of one of their roles
    ESCALATION = "escalation"  # their role is the type's escalation role


@dataclass(frozen=True)
class Through:
    way: Way
    role: str | None = None  # the role's name (ROLE, ESCALATION)


@dataclass
class Reception:
    """One message type the user receives in one warehouse, and every way it arrives."""

    warehouse: Warehouse
    message_type: MessageType
    through: list[Through] = field(default_factory=list)


def receptions(*, user: User) -> list[Reception]:
    """What `user` receives, per warehouse and message type (warehouse code, then type code):
    their own subscriptions, their roles' (a role is a group), and the escalations of types
    whose escalation role is one of theirs (in every warehouse; SPEC 7). Active warehouses and
    types only; an inactive user receives nothing. At most four queries."""
    if not user.is_active:
        return []
    roles = dict(user.groups.values_list("id", "name"))
    found: dict[tuple[int, int], Reception] = {}

    def add(warehouse: Warehouse, message_type: MessageType, through: Through) -> None:
        key = (warehouse.pk, message_type.pk)
        reception = found.setdefault(key, Reception(warehouse, message_type))
        if through not in reception.through:
            reception.through.append(through)

    subscriptions = (
        Subscription.objects.filter(Q(user=user) | Q(role_id__in=roles))
        .filter(warehouse__is_active=True, message_type__is_active=True)
        .select_related("warehouse", "message_type")
        .order_by(F("user_id").asc(nulls_last=True), "role__name")  # directly, then roles
    )
    for subscription in subscriptions:
        if subscription.role_id is None:
            through = Through(Way.DIRECTLY)
        else:
            through = Through(Way.ROLE, roles[subscription.role_id])
        add(subscription.warehouse, subscription.message_type, through)
    escalating = [
        (message_type, role.name)
        for message_type in MessageType.objects.filter(
            is_active=True, escalation_role_id__in=roles, escalate_after_seconds__isnull=False
        ).select_related("escalation_role")
        if (role := message_type.escalation_role) is not None
    ]
    if escalating:
        for warehouse in Warehouse.objects.filter(is_active=True):
            for message_type, role_name in escalating:
                add(warehouse, message_type, Through(Way.ESCALATION, role_name))
    return sorted(found.values(), key=lambda r: (r.warehouse.code, r.message_type.code))
