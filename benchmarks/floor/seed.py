"""The floor's data, written through the ORM of the run's database (Django set up against it):
warehouses, the two crews (roles) subscribed to the floor's alert type in every warehouse, one
user and token per handheld, the WMS that publishes, a staff user who reads the delivery
status, the alert action whose webhook is the run's receiver, and the two shifts of each
warehouse whose change falls mid-run."""

from __future__ import annotations

import datetime as dt
import io
import secrets
from typing import Any

from benchmarks.floor.plan import ACTION_CODE, ALERT_TYPE, CONFIRM_FIELD, CREWS, Handheld


def seed(*, handhelds: int, warehouses: int, webhook_url: str) -> dict[str, Any]:
    """Everything but the shifts; the ids and tokens the clients need, and the action's
    secret for the receiver."""
    from django.contrib.auth.models import Group, Permission, User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from actions.models import AlertAction
    from subscriptions.models import MessageType, Subscription, Warehouse

    places = [
        Warehouse.objects.create(code=f"FL{i + 1:02d}", name=f"Floor {i + 1}", timezone="UTC")
        for i in range(warehouses)
    ]
    alert_type = MessageType.objects.create(
        code=ALERT_TYPE,
        name="Floor alert",
        name_en="Floor alert",
        default_ttl_seconds=8 * 3600,
        default_severity="warning",
    )
    action = AlertAction.objects.create(
        message_type=alert_type,
        code=ACTION_CODE,
        label="Replenishment task created",
        url=webhook_url,
        resolves=True,
        confirm_field=CONFIRM_FIELD,
    )
    crews = [Group.objects.create(name=name) for name in CREWS]
    Subscription.objects.bulk_create(
        Subscription(message_type=alert_type, warehouse=place, role=crew)
        for place in places
        for crew in crews
    )
    users = User.objects.bulk_create(
        User(username=f"floor-{i:03d}", is_active=True) for i in range(handhelds)
    )
    for index, crew in enumerate(crews):
        crew.user_set.add(*users[index::2])
    tokens = Token.objects.bulk_create(Token(user=u, key=secrets.token_hex(20)) for u in users)
    wms = User.objects.create(username="floor-wms")
    wms.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    staff = User.objects.create(username="floor-staff", is_staff=True)
    call_command("sync_subscriptions", stdout=io.StringIO())
    return {
        "warehouses": tuple(p.pk for p in places),
        "handhelds": tuple(
            Handheld(
                index=i,
                user_id=user.pk,
                username=user.username,
                token=token.key,
                warehouse=places[(i // 2) % len(places)].pk,
                crew=i % 2,
            )
            for i, (user, token) in enumerate(zip(users, tokens, strict=True))
        ),
        "publisher_token": Token.objects.create(user=wms, key=secrets.token_hex(20)).key,
        "staff_token": Token.objects.create(user=staff, key=secrets.token_hex(20)).key,
        "secret": action.secret,
    }


def shift_change(*, start: float, end: float) -> float | None:
    """The whole minute (shift times are whole minutes) nearest after the middle of the run,
    kept 10 s inside it; None when the run holds no such minute."""
    middle = (start + end) / 2
    after = (int(middle) // 60 + 1) * 60
    before = after - 60
    for candidate in (after, before):
        if start + 10 <= candidate <= end - 10:
            return float(candidate)
    return None


def add_shifts(warehouses: tuple[int, ...], *, change_at: float) -> None:
    """Per warehouse: the early crew until the change (its claims released then), the late
    crew from it; each eight hours long, in the warehouses' zone (UTC)."""
    from django.contrib.auth.models import Group

    from shifts.models import Shift

    change = dt.datetime.fromtimestamp(change_at, dt.UTC).replace(second=0, microsecond=0)
    early, late = (Group.objects.get(name=name) for name in CREWS)
    eight = dt.timedelta(hours=8)
    for warehouse_id in warehouses:
        Shift.objects.create(
            warehouse_id=warehouse_id,
            role=early,
            name="Early",
            starts=(change - eight).time(),
            ends=change.time(),
            release_claims=True,
        )
        Shift.objects.create(
            warehouse_id=warehouse_id,
            role=late,
            name="Late",
            starts=change.time(),
            ends=(change + eight).time(),
            release_claims=True,
        )
