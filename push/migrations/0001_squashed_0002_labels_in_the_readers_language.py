"""The push app's tables as its migrations 0001 to 0002 left them, in one migration
(squashed: a database that applied those is not migrated again; the columns keep their
order)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    replaces = [('push', '0001_initial'), ('push', '0002_labels_in_the_readers_language')]

    initial = True

    dependencies = [
        ('subscriptions', '0001_squashed_0008_message_type_claim_timeout'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='VapidKeyPair',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(default='default', max_length=20, unique=True)),
                ('private_key', models.CharField(help_text='Raw 32-byte P-256 key, base64url.', max_length=64)),
                ('public_key', models.CharField(help_text='Uncompressed point, base64url.', max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name='PushSubscription',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('endpoint', models.CharField(max_length=1024, unique=True, verbose_name='endpoint')),
                ('p256dh', models.CharField(help_text="The browser's P-256 public key (base64url), to encrypt to.", max_length=100, verbose_name='P-256 key')),
                ('auth', models.CharField(help_text="The browser's auth secret (base64url).", max_length=50, verbose_name='auth secret')),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created at')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated at')),
                ('last_success_at', models.DateTimeField(blank=True, null=True, verbose_name='last success at')),
                ('last_failure_at', models.DateTimeField(blank=True, null=True, verbose_name='last failure at')),
                ('failures', models.PositiveIntegerField(default=0, help_text='Failed pushes since the last one that got through.', verbose_name='failures')),
                ('total_failures', models.PositiveIntegerField(default=0, verbose_name='total failures')),
                ('last_error', models.CharField(blank=True, max_length=200, verbose_name='last error')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='push_subscriptions', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                ('warehouses', models.ManyToManyField(related_name='push_subscriptions', to='subscriptions.warehouse', verbose_name='warehouses')),
            ],
            options={
                'ordering': ['-created_at'],
                'verbose_name': 'push subscription',
                'verbose_name_plural': 'push subscriptions',
            },
        ),
    ]
