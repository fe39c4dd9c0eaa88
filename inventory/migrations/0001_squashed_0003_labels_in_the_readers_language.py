"""The inventory app's tables as its migrations 0001 to 0003 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('inventory', '0001_initial'), ('inventory', '0002_replenishment_task'), ('inventory', '0003_labels_in_the_readers_language')]

    initial = True

    dependencies = [
        ('subscriptions', '0001_squashed_0008_message_type_claim_timeout'),
    ]

    operations = [
        migrations.CreateModel(
            name='Bin',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.CharField(help_text='e.g. A-01-03 (aisle, rack, level).', max_length=32, verbose_name='code')),
                ('stock', models.IntegerField(default=0, help_text='Below zero when a pick wave took more than the records showed: replenish.', verbose_name='stock')),
                ('last_wave', models.PositiveIntegerField(blank=True, help_text='The last pick wave that took from it.', null=True, verbose_name='last wave')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated at')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='bins', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['warehouse__code', 'code'],
                'indexes': [models.Index(fields=['stock'], name='inventory_bin_stock')],
                'constraints': [models.UniqueConstraint(fields=('warehouse', 'code'), name='inventory_bin_unique_code')],
                'verbose_name': 'bin',
                'verbose_name_plural': 'bins',
            },
        ),
        migrations.CreateModel(
            name='ReplenishmentTask',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('run_id', models.UUIDField(help_text="The alert action's run (Idempotency-Key).", unique=True, verbose_name='run ID')),
                ('bin_code', models.CharField(max_length=32, verbose_name='bin code')),
                ('quantity', models.IntegerField(help_text='How much to bring: what the bin is short of.', verbose_name='quantity')),
                ('notification_id', models.CharField(max_length=36, verbose_name='notification ID')),
                ('requested_by', models.CharField(max_length=150, verbose_name='requested by')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('warehouse', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='subscriptions.warehouse', verbose_name='warehouse')),
            ],
            options={
                'ordering': ['-created_at'],
                'verbose_name': 'replenishment task',
                'verbose_name_plural': 'replenishment tasks',
            },
        ),
    ]
