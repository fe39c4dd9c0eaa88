"""The notices app's tables as its migrations 0001 to 0005 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order), and the NOTICE message type (SPEC 15): notices are published with it."""

import config.timestamps
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

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

    replaces = [('notices', '0001_initial'), ('notices', '0002_notice_type'), ('notices', '0003_labels_in_the_readers_language'), ('notices', '0004_notice_version_at_default'), ('notices', '0005_notice_notification')]

    initial = True

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('subscriptions', '0001_squashed_0008_message_type_claim_timeout'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Notice',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('title', models.CharField(max_length=200, verbose_name='title')),
                ('body', models.TextField(blank=True, verbose_name='body')),
                ('severity', models.CharField(choices=[('info', 'info'), ('warning', 'warning'), ('critical', 'critical')], default='warning', max_length=10, verbose_name='severity')),
                ('requires_ack', models.BooleanField(default=True, verbose_name='must be acknowledged')),
                ('due_at', models.DateTimeField(blank=True, help_text='When it passes with acknowledgements missing, the escalation role is told.', null=True, verbose_name='due')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('version', models.PositiveIntegerField(default=1, editable=False, verbose_name='version')),
                ('version_at', models.DateTimeField(default=config.timestamps.now, editable=False, help_text='When the current version was made.', verbose_name='version at')),
                ('text_hash', models.CharField(editable=False, max_length=64, verbose_name='text hash')),
                ('is_closed', models.BooleanField(default=False, verbose_name='closed')),
                ('published_version', models.PositiveIntegerField(default=0, editable=False, verbose_name='published version')),
                ('notification_id', models.CharField(blank=True, editable=False, max_length=36, verbose_name='notification ID')),
                ('escalated_at', models.DateTimeField(blank=True, editable=False, null=True, verbose_name='escalated at')),
                ('escalated_version', models.PositiveIntegerField(blank=True, editable=False, null=True, verbose_name='escalated version')),
                ('escalated_missing', models.PositiveIntegerField(blank=True, editable=False, null=True, verbose_name='escalated missing')),
                ('escalation_sent', models.BooleanField(default=False, editable=False, verbose_name='escalation sent')),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='notices_created', to=settings.AUTH_USER_MODEL, verbose_name='created by')),
                ('escalation_role', models.ForeignKey(blank=True, help_text='Told who is missing at the due time; its members may see the roster.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='escalated_notices', to='auth.group', verbose_name='escalation role')),
                ('roles', models.ManyToManyField(blank=True, help_text='Every active member of these roles must read it (also those who join later).', related_name='notices', to='auth.group', verbose_name='roles')),
                ('users', models.ManyToManyField(blank=True, help_text='And these users.', related_name='notices', to=settings.AUTH_USER_MODEL, verbose_name='users')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notices', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['warehouse', '-created_at'], name='notices_not_warehou_b66784_idx'), models.Index(condition=models.Q(('escalated_at__isnull', True), ('is_closed', False)), fields=['due_at'], name='notice_due')],
                'verbose_name': 'notice',
                'verbose_name_plural': 'notices',
            },
        ),
        migrations.CreateModel(
            name='NoticeAck',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveIntegerField(verbose_name='version')),
                ('acked_at', models.DateTimeField(verbose_name='read at')),
                ('text_hash', models.CharField(max_length=64, verbose_name='text hash')),
                ('notice', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='acks', to='notices.notice', verbose_name='notice')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notice_acks', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'ordering': ['notice', '-version', 'acked_at'],
                'constraints': [models.UniqueConstraint(fields=('notice', 'version', 'user'), name='notice_ack_once_per_version')],
                'verbose_name': 'notice ack',
                'verbose_name_plural': 'notice acks',
            },
        ),
        migrations.CreateModel(
            name='NoticeReminder',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveIntegerField()),
                ('shift_start', models.DateTimeField()),
                ('token', models.CharField(max_length=32)),
                ('created_at', models.DateTimeField()),
                ('sent_at', models.DateTimeField(blank=True, null=True)),
                ('notice', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reminders', to='notices.notice')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notice_reminders', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'indexes': [models.Index(fields=['token'], name='notices_not_token_013b95_idx')],
                'constraints': [models.UniqueConstraint(fields=('notice', 'version', 'user', 'shift_start'), name='notice_reminder_once_per_shift')],
            },
        ),
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
        migrations.RunPython(create_type, remove_type),
    ]
