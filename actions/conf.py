"""The settings of alert actions, reminders and e-mail when unclaimed (SPEC 14), from the
environment (config/app_settings.py)."""

from config.app_settings import env

# The hosts alert actions' webhooks may be on (`host` = port 443, `host:port`, `*.domain`):
# the SSRF guard of Web Push (outbound/hosts.py). Empty by default: no webhook is
# allowed until an operator lists the WMS's host.
ALERT_WEBHOOK_ALLOWED_HOSTS = env.list("ALERT_WEBHOOK_ALLOWED_HOSTS", default=[])
ALERT_WEBHOOK_TIMEOUT_SECONDS = env.float("ALERT_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
ALERT_ACTION_MAX_ATTEMPTS = env.int("ALERT_ACTION_MAX_ATTEMPTS", default=5)
# Beat sends due reminders and unclaimed e-mails this often, reading at most BATCH due entries
# per Redis call and BATCHES calls per warehouse per tick (the rest wait for the next tick).
# 25 per call keeps each call near 0.7 ms (a reminder is about 14 commands in the script), far
# from the 5 ms a call may take; 40 calls still take 1,000 entries a tick.
ALERT_REMINDER_SECONDS = env.float("ALERT_REMINDER_SECONDS", default=10.0)
ALERT_REMINDER_BATCH = env.int("ALERT_REMINDER_BATCH", default=25)
ALERT_REMINDER_BATCHES = env.int("ALERT_REMINDER_BATCHES", default=40)
