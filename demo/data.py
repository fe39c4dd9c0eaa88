"""Demo data: warehouses, message types, roles, users and their subscriptions.

Idempotent: running it again keeps what exists and adds what is missing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import transaction

from actions.models import AlertAction
from config import timestamps
from inventory.demo import load_demo_inventory
from shifts.models import Shift
from shifts.schedule import zone
from subscriptions.models import MessageType, Severity, Subscription, Warehouse

DEMO_PASSWORD = "demo12345"

# code, name, time zone: two zones, so that shift times (local to each warehouse) show one at
# work; Hamburg's also moves with daylight saving.
WAREHOUSES = [
    ("SH01", "Shanghai Pudong DC", "Asia/Shanghai"),
    ("HH02", "Hamburg Billbrook DC", "Europe/Berlin"),
]
# Demo data of earlier versions: a second warehouse in Beijing, and both on UTC.
EARLIER_WAREHOUSE = ("BJ02", "Beijing Shunyi DC")
# code, name (Chinese), name in English, ttl, description
MESSAGE_TYPES = [
    (
        "REP_NOTICE",
        "补货通知",
        "Replenishment notice",
        3 * 24 * 3600,
        "A bin's stock went negative after a pick wave: replenish it.",
    ),
    ("QC_ALERT", "质检提醒", "Quality check", 24 * 3600, "Goods are waiting for a quality check."),
    ("SYS_NOTICE", "系统通知", "System notice", 24 * 3600, "Announcements for everyone on site."),
]
# A critical type that shows the alert lifecycle: the Replenishment role receives it, and one
# nobody claimed or resolved within 2 minutes is escalated to the Supervisors.
STOCK_OUT = (
    "STOCK_OUT",
    "缺货告警",
    "Stock-out alert",
    24 * 3600,
    "A bin is far below zero: pickers are waiting. Claim it, refill it, resolve it.",
)
STOCK_OUT_ESCALATE_AFTER_SECONDS = 120
# SPEC 14: a stock-out nobody claims is reminded every minute (3 times), and e-mailed to the
# Supervisors after 3 minutes (the demo prints mail on the outbox worker's console).
STOCK_OUT_REMIND_EVERY_SECONDS = 60
STOCK_OUT_EMAIL_AFTER_SECONDS = 180
# The demo's one alert action, on REP_NOTICE: its webhook is the demo WMS (inventory/webhooks.py)
# served over HTTPS by `manage.py demo` (WMS_DEMO_WEBHOOK_URL).
DEMO_ACTION = {
    "code": "task-created",
    "label": "Replenishment task created",
    "label_zh": "已创建补货任务",
    "resolves": True,
    "confirm_field": "bin",
    "confirm_label": "Scan the bin",
    "confirm_label_zh": "扫描库位",
}
DEMO_WEBHOOK_PATH = "/inventory/webhooks/replenishment-task/"
ROLES = ["Replenishment", "Supervisors"]
# username, first name, roles, is_staff
USERS = [
    ("alice", "Alice", ["Replenishment"], False),
    ("bob", "Bob", ["Replenishment"], False),
    ("carol", "Carol", ["Supervisors"], False),
    ("admin", "Admin", ["Supervisors"], True),
]


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    note: str


@transaction.atomic
def load_demo_data(*, webhook_url: str | None = None) -> list[DemoLogin]:
    """The demo's data; `webhook_url`: where the demo WMS's webhook is served (the alert
    action "Replenishment task created" on REP_NOTICE calls it)."""
    warehouses = {code: _demo_warehouse(code, name, zone) for code, name, zone in WAREHOUSES}
    for code, name, name_en, *_ in [*MESSAGE_TYPES, STOCK_OUT]:
        # Demo data of earlier versions had both languages in one name ("补货通知 Replenishment
        # notice"): split it, so each page shows its own language.
        MessageType.objects.filter(code=code, name=f"{name} {name_en}").update(
            name=name, name_en=name_en
        )
    types = {
        code: MessageType.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "name_en": name_en,
                "default_ttl_seconds": ttl,
                "description": description,
            },
        )[0]
        for code, name, name_en, ttl, description in MESSAGE_TYPES
    }
    roles = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
    code, name, name_en, ttl, description = STOCK_OUT
    types[code] = MessageType.objects.get_or_create(
        code=code,
        defaults={
            "name": name,
            "name_en": name_en,
            "default_ttl_seconds": ttl,
            "description": description,
            "default_severity": Severity.CRITICAL,
            "escalate_after_seconds": STOCK_OUT_ESCALATE_AFTER_SECONDS,
            "escalation_role": roles["Supervisors"],
            "remind_every_seconds": STOCK_OUT_REMIND_EVERY_SECONDS,
            "email_after_seconds": STOCK_OUT_EMAIL_AFTER_SECONDS,
        },
    )[0]
    roles["Supervisors"].permissions.add(
        *Permission.objects.filter(codename="publish_notification")
    )
    logins = []
    for username, first_name, role_names, is_staff in USERS:
        user, created = User.objects.get_or_create(
            username=username,
            defaults={
                "first_name": first_name,
                "is_staff": is_staff,
                "is_superuser": is_staff,
                "email": f"{username}@example.com",
            },
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        user.groups.add(*(roles[r] for r in role_names))
        logins.append(
            DemoLogin(
                username,
                DEMO_PASSWORD,
                "staff: Django admin" if is_staff else ", ".join(role_names),
            )
        )

    # Which role receives which types, in every warehouse.
    wanted = {
        "Replenishment": ("REP_NOTICE", "SYS_NOTICE", "STOCK_OUT"),
        "Supervisors": ("QC_ALERT", "REP_NOTICE", "SYS_NOTICE"),
    }
    for role_name, codes in wanted.items():
        for code in codes:
            for warehouse in warehouses.values():
                Subscription.objects.get_or_create(
                    message_type=types[code], warehouse=warehouse, role=roles[role_name]
                )
    for warehouse in warehouses.values():
        load_demo_shifts(warehouse, roles["Replenishment"])
    # Bins and stock for the rules example (a bin already negative after wave 8812) and the
    # negative-stock rule as an SQL rule beside the Python one.
    load_demo_inventory(warehouses, rep_notice=types["REP_NOTICE"])
    if webhook_url:
        AlertAction.objects.update_or_create(
            message_type=types["REP_NOTICE"],
            code=DEMO_ACTION["code"],
            defaults={**DEMO_ACTION, "url": webhook_url},
        )
    return logins


def _demo_warehouse(code: str, name: str, zone: str) -> Warehouse:
    """The demo's warehouse `code`, made or brought up to date. An earlier demo's Beijing
    warehouse becomes the second one (its id, bins and subscriptions kept); a warehouse still
    on the default zone gets its own (saved, so the directory hears of it)."""
    if code == WAREHOUSES[1][0] and not Warehouse.objects.filter(code=code).exists():
        earlier_code, earlier_name = EARLIER_WAREHOUSE
        earlier = Warehouse.objects.filter(code=earlier_code, name=earlier_name).first()
        if earlier is not None:
            earlier.code, earlier.name, earlier.timezone = code, name, zone
            earlier.save()
    warehouse, created = Warehouse.objects.get_or_create(
        code=code, defaults={"name": name, "timezone": zone}
    )
    if (
        not created
        and warehouse.timezone in (settings.TIME_ZONE, "UTC")
        and zone != warehouse.timezone
    ):
        warehouse.timezone = zone
        warehouse.save(update_fields=["timezone"])
    return warehouse


def demo_shift_change(warehouse: Warehouse) -> dt.time:
    """When the Day shift hands over to the Night shift: WMS_DEMO_SHIFT_CHANGE_MINUTES from
    now (local time, whole minutes), or 18:00 when that is 0."""
    minutes = settings.WMS_DEMO_SHIFT_CHANGE_MINUTES
    if minutes <= 0:
        return dt.time(18)
    local = timestamps.now().astimezone(zone(warehouse.timezone))
    change = local.replace(second=0, microsecond=0) + dt.timedelta(minutes=minutes + 1)
    return change.time()


def load_demo_shifts(warehouse: Warehouse, role: Group) -> None:
    """Two shifts of 12 hours for the role: Day, then Night (crossing midnight), handing over
    at demo_shift_change. Each run of the demo moves them (so the next change is near)."""
    change = demo_shift_change(warehouse)
    day_start = (dt.datetime.combine(dt.date(2000, 1, 1), change) - dt.timedelta(hours=12)).time()
    for name, starts, ends in (("Day", day_start, change), ("Night", change, day_start)):
        Shift.objects.update_or_create(
            warehouse=warehouse,
            role=role,
            name=name,
            defaults={"starts": starts, "ends": ends, "weekdays": [], "release_claims": True},
        )
