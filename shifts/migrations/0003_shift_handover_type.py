"""The SHIFT_HANDOVER message type (SPEC 13): handovers are published with it."""

from django.db import migrations

CODE = "SHIFT_HANDOVER"


def create_type(apps, schema_editor):
    MessageType = apps.get_model("subscriptions", "MessageType")
    MessageType.objects.get_or_create(
        code=CODE,
        defaults={
            "name": "交接班",
            "name_en": "Shift handover",
            "description": "At each shift end, what the shift hands to the next: open, "
            "claimed, escalated and resolved alerts. Reaches the shift's role whether or not "
            "it subscribes.",
            "default_ttl_seconds": 24 * 3600,
            "default_severity": "info",
        },
    )


def remove_type(apps, schema_editor):
    apps.get_model("subscriptions", "MessageType").objects.filter(code=CODE).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("shifts", "0002_handover"),
        ("subscriptions", "0004_warehouse_timezone"),
    ]

    operations = [migrations.RunPython(create_type, remove_type)]
