# The SQL rules' models, moved from notifications (notifications/migrations/0008): Django's
# record of them is made here, their tables are the ones notifications created (db_table). The
# admin permissions' content types move to this app, so groups keep what they were given.

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ("sqlrule", "sqlruledryrun")


def move_content_types(apps, schema_editor, source="notifications", target="rules"):
    """The content types (and so the permissions) of the two models change app label."""
    content_types = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MODELS:
        if content_types.objects.using(db).filter(app_label=target, model=model).exists():
            continue  # already there (made after a fresh migrate): nothing to move
        content_types.objects.using(db).filter(app_label=source, model=model).update(
            app_label=target
        )


def move_content_types_back(apps, schema_editor):
    move_content_types(apps, schema_editor, source="rules", target="notifications")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("notifications", "0008_rules_move_to_their_own_app"),
        ("subscriptions", "0001_squashed_0008_message_type_claim_timeout"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SqlRule",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "name",
                            models.CharField(max_length=100, unique=True, verbose_name="name"),
                        ),
                        (
                            "description",
                            models.TextField(
                                blank=True,
                                help_text="What the rule is for, for colleagues.",
                                verbose_name="description",
                            ),
                        ),
                        (
                            "query",
                            models.TextField(
                                help_text="One read-only SELECT returning the columns warehouse_id, title and body, and optionally key (the condition: the same key is not notified again while it persists; default: the title) and data (a JSON object as text). Every row is one notification. Example: SELECT warehouse_id, 'Replenish ' || code AS title, 'Stock is ' || stock AS body, code AS key FROM inventory_bin WHERE stock < 0",
                                verbose_name="query",
                            ),
                        ),
                        (
                            "interval_seconds",
                            models.PositiveIntegerField(
                                default=60,
                                help_text="Run at most this often.",
                                validators=[django.core.validators.MinValueValidator(5)],
                                verbose_name="interval (seconds)",
                            ),
                        ),
                        (
                            "is_active",
                            models.BooleanField(
                                default=False,
                                help_text="A new rule, or one whose query changed, can be activated only once a dry run of its query has passed (save it, then use the Dry run button).",
                                verbose_name="active",
                            ),
                        ),
                        (
                            "dry_run_passed_query",
                            models.TextField(
                                blank=True, editable=False, verbose_name="dry run passed query"
                            ),
                        ),
                        (
                            "last_run_at",
                            models.DateTimeField(
                                blank=True, editable=False, null=True, verbose_name="last run at"
                            ),
                        ),
                        (
                            "last_result_count",
                            models.PositiveIntegerField(
                                blank=True,
                                editable=False,
                                help_text="Rows the last run's query returned.",
                                null=True,
                                verbose_name="last result count",
                            ),
                        ),
                        (
                            "last_error",
                            models.TextField(blank=True, editable=False, verbose_name="last error"),
                        ),
                        (
                            "message_type",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="sql_rules",
                                to="subscriptions.messagetype",
                                verbose_name="message type",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "SQL rule",
                        "verbose_name_plural": "SQL rules",
                        "db_table": "notifications_sqlrule",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="SqlRuleDryRun",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("query", models.TextField()),
                        ("query_sha256", models.CharField(max_length=64)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "pending"),
                                    ("running", "running"),
                                    ("passed", "passed"),
                                    ("failed", "failed"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("timeout_seconds", models.FloatField(help_text="The query's time limit.")),
                        ("created_at", models.DateTimeField()),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("elapsed_ms", models.FloatField(blank=True, null=True)),
                        ("alert_count", models.PositiveIntegerField(blank=True, null=True)),
                        ("error", models.TextField(blank=True)),
                        ("warning", models.TextField(blank=True)),
                        ("outcomes", models.JSONField(blank=True, default=list)),
                        (
                            "requested_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "rule",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="dry_runs",
                                to="rules.sqlrule",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "SQL rule dry run",
                        "db_table": "notifications_sqlruledryrun",
                        "ordering": ["-created_at", "-pk"],
                        "constraints": [
                            models.UniqueConstraint(
                                condition=models.Q(("status__in", ["pending", "running"])),
                                fields=("rule", "query_sha256"),
                                name="one_unfinished_dry_run_per_query",
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
