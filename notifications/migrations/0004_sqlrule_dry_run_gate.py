"""A new SQL rule is inactive until a dry run of its query has passed (issue 20). Rules that
already exist have been running their query: it counts as passed."""

from django.db import migrations, models


def existing_queries_passed(apps, schema_editor):
    SqlRule = apps.get_model("notifications", "SqlRule")
    SqlRule.objects.update(dry_run_passed_query=models.F("query"))


class Migration(migrations.Migration):
    dependencies = [("notifications", "0003_alert_report")]

    operations = [
        migrations.AddField(
            model_name="sqlrule",
            name="dry_run_passed_query",
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.AlterField(
            model_name="sqlrule",
            name="is_active",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "A new rule, or one whose query changed, can be activated only once a dry "
                    "run of its query has passed (save it, then use the Dry run button)."
                ),
            ),
        ),
        migrations.RunPython(existing_queries_passed, migrations.RunPython.noop),
    ]
