"""The shifts app's tables as its migrations 0001 to 0004 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order), and the SHIFT_HANDOVER message type (SPEC 13): handovers are published with it."""

import django.db.models.deletion
import shifts.models
from django.conf import settings
from django.db import migrations, models

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

    replaces = [('shifts', '0001_initial'), ('shifts', '0002_handover'), ('shifts', '0003_shift_handover_type'), ('shifts', '0004_labels_in_the_readers_language')]

    initial = True

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('subscriptions', '0001_squashed_0008_message_type_claim_timeout'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Shift',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text='e.g. Early, Late, Night', max_length=100, verbose_name='name')),
                ('starts', models.TimeField(help_text="Local time in the warehouse's time zone.", verbose_name='starts')),
                ('ends', models.TimeField(help_text='Local time. Not after the start means the shift crosses midnight and ends the next day (22:00 to 06:00); the same time as the start is a 24-hour shift.', verbose_name='ends')),
                ('weekdays', models.JSONField(blank=True, default=list, help_text='ISO numbers of the days the shift starts on, 1 = Monday ... 7 = Sunday, e.g. [1, 2, 3, 4, 5]; empty = every day. A night shift is listed by the day it starts.', validators=[shifts.models.validate_weekdays], verbose_name='weekdays')),
                ('release_claims', models.BooleanField(default=True, help_text='At the end of the shift, alerts claimed by members going off shift go back to open.', verbose_name='release claims')),
                ('role', models.ForeignKey(help_text='The role (group) working this shift; its members are on shift while it runs.', on_delete=django.db.models.deletion.CASCADE, related_name='shifts', to='auth.group', verbose_name='role')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='shifts', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['warehouse__code', 'role__name', 'starts', 'id'],
                'verbose_name': 'shift',
                'verbose_name_plural': 'shifts',
            },
        ),
        migrations.CreateModel(
            name='Handover',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('shift_name', models.CharField(max_length=100, verbose_name='shift name')),
                ('starts', models.DateTimeField(help_text='When this run of the shift started.', verbose_name='starts')),
                ('ends', models.DateTimeField(help_text='When this run of the shift ended.', verbose_name='ends')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('content', models.JSONField(blank=True, default=dict, verbose_name='content')),
                ('notification_id', models.CharField(blank=True, max_length=36, verbose_name='notification ID')),
                ('accepted_at', models.DateTimeField(blank=True, null=True, verbose_name='accepted at')),
                ('completed_at', models.DateTimeField(blank=True, null=True, verbose_name='completed at')),
                ('lease_until', models.DateTimeField(blank=True, null=True, verbose_name='lease until')),
                ('accepted_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='accepted_handovers', to=settings.AUTH_USER_MODEL, verbose_name='accepted by')),
                ('role', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='handovers', to='auth.group', verbose_name='role')),
                ('shift', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='handovers', to='shifts.shift', verbose_name='shift')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='handovers', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['-ends', '-id'],
                'indexes': [models.Index(fields=['warehouse', 'role', '-ends'], name='shifts_hand_warehou_bad509_idx')],
                'constraints': [models.UniqueConstraint(fields=('shift', 'ends'), name='handover_once_per_shift_end')],
                'verbose_name': 'handover',
                'verbose_name_plural': 'handovers',
            },
        ),
        migrations.RunPython(create_type, remove_type),
    ]
