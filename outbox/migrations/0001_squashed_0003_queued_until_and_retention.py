"""The outbox app's tables as its migrations 0001 to 0003 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order)."""

import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('outbox', '0001_initial'), ('outbox', '0002_labels_in_the_readers_language'), ('outbox', '0003_queued_until_and_retention')]

    initial = True

    dependencies = [
    ]

    operations = [
        migrations.CreateModel(
            name='OutboxMessage',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(help_text='Which handler sends it (webhook, email).', max_length=32, verbose_name='kind')),
                ('payload', models.JSONField(help_text='What its handler needs to send it.', verbose_name='payload')),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('sending', 'Sending'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='pending', max_length=10, verbose_name='status')),
                ('attempts', models.PositiveIntegerField(default=0, help_text='Attempts started so far.', verbose_name='attempts')),
                ('max_attempts', models.PositiveIntegerField(default=5, verbose_name='attempts at most')),
                ('next_attempt_at', models.DateTimeField(help_text='When it is due (pending ones).', verbose_name='next attempt at')),
                ('lease_until', models.DateTimeField(blank=True, help_text='Sending: when a worker that died holding it is given up.', null=True, verbose_name='lease until')),
                ('last_error', models.CharField(blank=True, max_length=500, verbose_name='last error')),
                ('result', models.TextField(blank=True, help_text='What the receiver answered (cut).', verbose_name='result')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('finished_at', models.DateTimeField(blank=True, null=True, verbose_name='finished at')),
                ('settled_at', models.DateTimeField(blank=True, help_text='When the feature that wrote it recorded its outcome (history, status).', null=True, verbose_name='settled at')),
                ('queued_until', models.DateTimeField(blank=True, help_text="A task for it is queued: beat's pass queues no other before this time.", null=True, verbose_name='queued until')),
            ],
            options={
                'ordering': ['-created_at'],
                'indexes': [models.Index(fields=['status', 'next_attempt_at'], name='outbox_due'), models.Index(fields=['status', 'lease_until'], name='outbox_lease'), models.Index(condition=models.Q(('settled_at__isnull', True)), fields=['settled_at', 'status'], name='outbox_unsettled'), models.Index(condition=models.Q(('finished_at__isnull', False)), fields=['finished_at'], name='outbox_finished')],
                'verbose_name': 'outbox message',
                'verbose_name_plural': 'outbox messages',
            },
        ),
    ]
