"""The NOTICE message type (SPEC 15): notices are published with it."""

from django.db import migrations

CODE = "NOTICE"


def create_type(apps, schema_editor):
    MessageType = apps.get_model("subscriptions", "MessageType")
    MessageType.objects.get_or_create(
        code=CODE,
        defaults={
            "name": "须知",
            "name_en": "Notice",
            "description": "A safety or procedure notice everyone in its audience must read "
            "and acknowledge. Reaches its roles and users whether or not they subscribe.",
            "default_ttl_seconds": 7 * 24 * 3600,
            "default_severity": "warning",
        },
    )


def remove_type(apps, schema_editor):
    apps.get_model("subscriptions", "MessageType").objects.filter(code=CODE).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("notices", "0001_initial"),
        ("subscriptions", "0005_messagetype_reminders_and_email"),
    ]

    operations = [migrations.RunPython(create_type, remove_type)]
