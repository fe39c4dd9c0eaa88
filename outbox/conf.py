"""The outbox's settings: webhooks and e-mails sent by a Celery task (SPEC 14), from the
environment (config/app_settings.py)."""

from config.app_settings import env

# The outbox's task runs on its own queue (OUTBOX_QUEUE, declared on the task), so a slow
# receiver never holds up sweeps and rules: run a worker for it (`celery -A config worker
# -Q outbox`, the Procfiles' `outbox` line). The outbox registers its beat entries itself
# (outbox/apps.py): the pass every OUTBOX_PASS_SECONDS and the purge of rows that ended.
# Attempts per message (an alert action's webhook: ALERT_ACTION_MAX_ATTEMPTS), the wait after
# the first failure, doubled each time up to the longest (with jitter), and how long a worker
# holds a message it is sending (by the database's clock): one that died holding it is sent
# again after that, and an attempt is cut off at three quarters of it (e-mail: the whole SMTP
# conversation; webhooks: the whole request), so no attempt outlives its lease.
OUTBOX_QUEUE = env("OUTBOX_QUEUE", default="outbox")
OUTBOX_MAX_ATTEMPTS = env.int("OUTBOX_MAX_ATTEMPTS", default=5)
OUTBOX_RETRY_FIRST_SECONDS = env.float("OUTBOX_RETRY_FIRST_SECONDS", default=10.0)
OUTBOX_RETRY_MAX_SECONDS = env.float("OUTBOX_RETRY_MAX_SECONDS", default=600.0)
OUTBOX_LEASE_SECONDS = env.float("OUTBOX_LEASE_SECONDS", default=60.0)
OUTBOX_RESULT_MAX_CHARS = 2000
# Beat queues what is due and not queued within its lease (a broker that was down, a worker
# that never came), what a dead worker left, and outcomes not yet settled, this often, at most
# this many of each per pass.
OUTBOX_PASS_SECONDS = env.float("OUTBOX_PASS_SECONDS", default=10.0)
OUTBOX_PASS_BATCH = env.int("OUTBOX_PASS_BATCH", default=200)
# Messages that ended (succeeded or failed, and recorded by their feature) are deleted this
# many days after they ended; beat deletes them every OUTBOX_PURGE_SECONDS, in bounded batches.
OUTBOX_RETENTION_DAYS = env.int("OUTBOX_RETENTION_DAYS", default=14)
OUTBOX_PURGE_SECONDS = env.float("OUTBOX_PURGE_SECONDS", default=300.0)
