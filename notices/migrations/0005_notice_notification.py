"""The notifications published for a notice (SPEC 15): acknowledging reads them."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('notices', '0004_notice_version_at_default'),
    ]

    operations = [
        migrations.CreateModel(
            name='NoticeNotification',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveIntegerField()),
                ('notification_id', models.CharField(max_length=36, unique=True)),
                ('reminder', models.BooleanField(default=False)),
                ('notice', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notifications', to='notices.notice')),
            ],
        ),
    ]
