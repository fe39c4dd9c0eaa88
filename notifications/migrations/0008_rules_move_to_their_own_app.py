# SqlRule and SqlRuleDryRun now belong to the rules app (rules/migrations/0001_initial.py): only
# Django's record of the models goes from here; their tables stay as they are.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_squashed_0007_noise_report"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="SqlRuleDryRun"),
                migrations.DeleteModel(name="SqlRule"),
            ],
        ),
    ]
