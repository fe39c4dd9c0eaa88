"""The subscriptions app's tables as its migrations 0001 to 0008 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order)."""

import django.core.validators
import django.db.models.deletion
import subscriptions.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('subscriptions', '0001_initial'), ('subscriptions', '0002_message_type_lifecycle'), ('subscriptions', '0003_message_type_name_en'), ('subscriptions', '0004_warehouse_timezone'), ('subscriptions', '0005_messagetype_reminders_and_email'), ('subscriptions', '0006_message_type_internal'), ('subscriptions', '0007_labels_in_the_readers_language'), ('subscriptions', '0008_message_type_claim_timeout')]

    initial = True

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='MessageType',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.CharField(max_length=32, unique=True, validators=[django.core.validators.RegexValidator('^[A-Z0-9][A-Z0-9_-]*$', "Use capital letters, digits, '_' and '-' (e.g. SH01, REP_NOTICE).")], verbose_name='code')),
                ('name', models.CharField(help_text='The name people read, e.g. 补货通知 (the Chinese page shows it).', max_length=100, verbose_name='name')),
                ('description', models.TextField(blank=True, verbose_name='description')),
                ('default_ttl_seconds', models.PositiveIntegerField(default=86400, help_text='How long a notification of this type lives, in seconds.', validators=[django.core.validators.MinValueValidator(1)], verbose_name='time to live (seconds)')),
                ('is_active', models.BooleanField(default=True, verbose_name='active')),
                ('default_severity', models.CharField(choices=[('info', 'Info'), ('warning', 'Warning'), ('critical', 'Critical')], default='info', help_text='Severity of its notifications unless the publisher (or a rule) says otherwise.', max_length=8, verbose_name='default severity')),
                ('escalate_after_seconds', models.PositiveIntegerField(blank=True, help_text='A notification still open (nobody claimed or resolved it) this many seconds after publishing is escalated once: its severity goes up one step and it is delivered to the escalation role. Empty: never escalate.', null=True, validators=[django.core.validators.MinValueValidator(1)], verbose_name='escalate after (seconds)')),
                ('escalation_role', models.ForeignKey(blank=True, help_text='The role (group) whose inbox in the same warehouse receives escalated notifications of this type, e.g. Supervisors.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='escalated_message_types', to='auth.group', verbose_name='escalation role')),
                ('name_en', models.CharField(blank=True, help_text='e.g. Replenishment notice: the English page shows it (empty: the name).', max_length=100, verbose_name='name in English')),
                ('email_after_seconds', models.PositiveIntegerField(blank=True, help_text='An alert still open this long after publishing is e-mailed once to the members with an e-mail address of the escalation role (else of the subscribed roles) who are on shift (critical: all of them). Empty: never.', null=True, validators=[django.core.validators.MinValueValidator(1)], verbose_name='e-mail after (seconds)')),
                ('remind_every_seconds', models.PositiveIntegerField(blank=True, help_text='While an alert stays open (nobody claimed it), push it again every this many seconds to the members on shift who see it (SPEC 14). Empty: never.', null=True, validators=[django.core.validators.MinValueValidator(1)], verbose_name='remind every (seconds)')),
                ('remind_max', models.PositiveSmallIntegerField(default=3, help_text='At most this many reminders per alert.', verbose_name='reminders at most')),
                ('internal', models.BooleanField(default=False, editable=False, help_text='Used by the product itself (the delivery canaries): nobody subscribes to it and no report counts it.', verbose_name='internal')),
                ('claim_timeout_seconds', models.PositiveIntegerField(blank=True, help_text='An alert claimed this long with no progress (no action run, no resolve) is released by the system, unread again and pushed again (SPEC 17). Empty: never.', null=True, validators=[django.core.validators.MinValueValidator(1)], verbose_name='claim timeout (seconds)')),
            ],
            options={
                'ordering': ['code'],
                'verbose_name': 'message type',
                'verbose_name_plural': 'message types',
            },
        ),
        migrations.CreateModel(
            name='Warehouse',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.CharField(max_length=16, unique=True, validators=[django.core.validators.RegexValidator('^[A-Z0-9][A-Z0-9_-]*$', "Use capital letters, digits, '_' and '-' (e.g. SH01, REP_NOTICE).")], verbose_name='code')),
                ('name', models.CharField(max_length=100, verbose_name='name')),
                ('is_active', models.BooleanField(default=True, verbose_name='active')),
                ('timezone', models.CharField(default=subscriptions.models.default_timezone, help_text="The IANA time zone of the warehouse, e.g. Asia/Shanghai: its shifts' times are local times in this zone.", max_length=64, validators=[subscriptions.models.validate_timezone], verbose_name='timezone')),
            ],
            options={
                'ordering': ['code'],
                'verbose_name': 'warehouse',
                'verbose_name_plural': 'warehouses',
            },
        ),
        migrations.CreateModel(
            name='Subscription',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('message_type', models.ForeignKey(limit_choices_to={'internal': False}, on_delete=django.db.models.deletion.CASCADE, related_name='subscriptions', to='subscriptions.messagetype', verbose_name='message type')),
                ('role', models.ForeignKey(blank=True, help_text='Every member of this group receives the notifications.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='notification_subscriptions', to='auth.group', verbose_name='role')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='notification_subscriptions', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='subscriptions', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['warehouse__code', 'message_type__code', 'id'],
                'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('role__isnull', True), ('user__isnull', False)), models.Q(('role__isnull', False), ('user__isnull', True)), _connector='OR'), name='subscription_exactly_one_subscriber', violation_error_message='Choose either a user or a role, not both.'), models.UniqueConstraint(condition=models.Q(('user__isnull', False)), fields=('message_type', 'warehouse', 'user'), name='subscription_unique_user', violation_error_message='This user already receives this type in this warehouse.'), models.UniqueConstraint(condition=models.Q(('role__isnull', False)), fields=('message_type', 'warehouse', 'role'), name='subscription_unique_role', violation_error_message='This role already receives this type in this warehouse.')],
                'verbose_name': 'subscription',
                'verbose_name_plural': 'subscriptions',
            },
        ),
    ]
