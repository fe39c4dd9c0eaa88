import django.db.models.deletion
from django.contrib.auth.hashers import make_password
from django.db import migrations, models


def create_canary(apps, schema_editor):
    """The canaries' message type (internal: nobody subscribes, no report counts it) and the
    user whose inbox is theirs (cannot sign in)."""
    MessageType = apps.get_model("subscriptions", "MessageType")
    User = apps.get_model("auth", "User")
    MessageType.objects.get_or_create(
        code="CANARY",
        defaults={
            "name": "投递探针",
            "name_en": "Delivery canary",
            "description": "Published by the product to measure delivery (SPEC 16); never shown.",
            "default_ttl_seconds": 3600,
            "internal": True,
        },
    )
    User.objects.get_or_create(
        username="wms-canary",
        defaults={"is_active": False, "password": make_password(None)},
    )


def remove_canary(apps, schema_editor):
    apps.get_model("subscriptions", "MessageType").objects.filter(code="CANARY").delete()
    apps.get_model("auth", "User").objects.filter(username="wms-canary").delete()


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("subscriptions", "0001_squashed_0008_message_type_claim_timeout"),
    ]

    operations = [
        migrations.CreateModel(
            name="Episode",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("status", models.CharField(help_text="late or missing", max_length=8, verbose_name="status")),
                ("started_at", models.DateTimeField(verbose_name="started at")),
                ("alarmed_at", models.DateTimeField(blank=True, null=True, verbose_name="alarm sent at")),
                ("ended_at", models.DateTimeField(blank=True, null=True, verbose_name="ended at")),
                (
                    "warehouse",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="delivery_episodes",
                        to="subscriptions.warehouse",
                    ),
                ),
            ],
            options={
                "verbose_name": "delivery episode",
                "verbose_name_plural": "delivery episodes",
                "ordering": ["-started_at"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("ended_at__isnull", True)),
                        fields=("warehouse",),
                        name="delivery_one_open_episode_per_warehouse",
                    )
                ],
            },
        ),
        migrations.RunPython(create_canary, remove_canary),
    ]
