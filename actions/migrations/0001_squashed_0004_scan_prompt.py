"""The actions app's tables as its migrations 0001 to 0004 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order)."""

import actions.models
import config.timestamps
import django.core.validators
import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('actions', '0001_initial'), ('actions', '0002_labels_in_the_readers_language'), ('actions', '0003_run_outlives_its_outbox_message'), ('actions', '0004_scan_prompt')]

    initial = True

    dependencies = [
        ('outbox', '0001_squashed_0003_queued_until_and_retention'),
        ('subscriptions', '0001_squashed_0008_message_type_claim_timeout'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='AlertAction',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.CharField(help_text='Unique within the message type; the API names the action by it.', max_length=32, validators=[django.core.validators.RegexValidator('^[a-z0-9][a-z0-9_-]*$', "Use small letters, digits, '_' and '-' (e.g. replenish-task).")], verbose_name='code')),
                ('label', models.CharField(help_text='What the button says (English).', max_length=100, verbose_name='label')),
                ('label_zh', models.CharField(blank=True, help_text='Empty: the English label.', max_length=100, verbose_name='label in Chinese')),
                ('url', models.CharField(help_text='https:// on a host in ALERT_WEBHOOK_ALLOWED_HOSTS; it receives a signed POST per run.', max_length=1024, verbose_name='webhook URL')),
                ('secret', models.CharField(default=actions.models.generate_secret, help_text='Signs each call (X-WMS-Signature: sha256=<HMAC-SHA256 of the body>). Generated; give it to the WMS.', max_length=64, validators=[django.core.validators.MinLengthValidator(32)], verbose_name='secret')),
                ('resolves', models.BooleanField(default=False, help_text='A successful run resolves the alert (by the one who pressed).', verbose_name='resolves')),
                ('confirm_field', models.CharField(blank=True, help_text="A key of the notification's data (e.g. bin) whose value must be scanned to run it. Empty: no scan. The alerts of this type must carry it: on one whose data lacks it, the page shows the action disabled with the reason (saving warns when recent alerts lack it).", max_length=64, verbose_name='confirm field')),
                ('is_active', models.BooleanField(default=True, verbose_name='active')),
                ('message_type', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='alert_actions', to='subscriptions.messagetype', verbose_name='message type')),
                ('confirm_label', models.CharField(blank=True, help_text='What the scan field says, in words (e.g. Scan the bin). Empty: “Scan the <confirm field>”.', max_length=100, verbose_name='scan prompt')),
                ('confirm_label_zh', models.CharField(blank=True, help_text="E.g. 扫描库位. Empty: the English prompt's pattern in Chinese.", max_length=100, verbose_name='scan prompt in Chinese')),
            ],
            options={
                'ordering': ['message_type__code', 'id'],
                'constraints': [models.UniqueConstraint(fields=('message_type', 'code'), name='alert_action_unique_code', violation_error_message='This message type has an action with this code.')],
                'verbose_name': 'alert action',
                'verbose_name_plural': 'alert actions',
            },
        ),
        migrations.CreateModel(
            name='ActionRun',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False, verbose_name='ID')),
                ('notification_id', models.CharField(db_index=True, max_length=36, verbose_name='notification ID')),
                ('username', models.CharField(help_text='Who pressed it (kept if renamed).', max_length=150, verbose_name='username')),
                ('scan', models.CharField(blank=True, max_length=200, verbose_name='scan')),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='pending', max_length=10, verbose_name='status')),
                ('result', models.TextField(blank=True, help_text="The webhook's answer (2,000 characters).", verbose_name='result')),
                ('created_at', models.DateTimeField(default=config.timestamps.now, verbose_name='created at')),
                ('finished_at', models.DateTimeField(blank=True, null=True, verbose_name='finished at')),
                ('idempotency_key', models.CharField(blank=True, max_length=32, verbose_name='idempotency key')),
                ('idempotency_fingerprint', models.CharField(blank=True, max_length=64, verbose_name='idempotency fingerprint')),
                ('first_answer', models.JSONField(blank=True, null=True, verbose_name='first answer')),
                ('message', models.OneToOneField(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='outbox.outboxmessage', verbose_name='outbox message')),
                ('user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='subscriptions.warehouse', verbose_name='warehouse')),
                ('action', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='actions.alertaction', verbose_name='action')),
                ('attempts', models.PositiveIntegerField(default=0, help_text='Webhook calls made (when ended).', verbose_name='attempts')),
            ],
            options={
                'ordering': ['-created_at'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('idempotency_key', ''), _negated=True), fields=('user', 'idempotency_key'), name='action_run_unique_idempotency_key'), models.UniqueConstraint(condition=models.Q(('status__in', ['pending', 'succeeded'])), fields=('action', 'warehouse', 'notification_id'), name='action_run_one_live')],
                'verbose_name': 'action run',
                'verbose_name_plural': 'action runs',
            },
        ),
    ]
