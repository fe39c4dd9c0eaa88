"""A notice made from code needs no `version_at`: it defaults to now (SPEC 10)."""

import config.timestamps
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('notices', '0003_labels_in_the_readers_language'),
    ]

    operations = [
        migrations.AlterField(
            model_name='notice',
            name='version_at',
            field=models.DateTimeField(default=config.timestamps.now, editable=False, help_text='When the current version was made.', verbose_name='version at'),
        ),
    ]
