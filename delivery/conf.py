"""The delivery objective's settings (SPEC 16), from the environment (config/app_settings.py)."""

from config.app_settings import env

# Beat publishes a canary to every active warehouse this often (0: no canaries), at most
# CANARY_BATCH warehouses per pass of its loop; a canary not arrived on a path this long after
# its publish makes the warehouse late. The objective: DELIVERY_OBJECTIVE_TARGET of canaries
# within DELIVERY_OBJECTIVE_SECONDS. Beat checks every warehouse every DELIVERY_CHECK_SECONDS;
# a warehouse late or missing for DELIVERY_ALARM_AFTER_SECONDS e-mails DELIVERY_ALARM_EMAILS
# once per episode (through the outbox), and once more when it is back.
CANARY_INTERVAL_SECONDS = env.float("CANARY_INTERVAL_SECONDS", default=60.0)
CANARY_LATE_SECONDS = env.float("CANARY_LATE_SECONDS", default=10.0)
CANARY_BATCH = env.int("CANARY_BATCH", default=200)
DELIVERY_OBJECTIVE_SECONDS = env.float("DELIVERY_OBJECTIVE_SECONDS", default=2.0)
DELIVERY_OBJECTIVE_TARGET = env.float("DELIVERY_OBJECTIVE_TARGET", default=0.999)
DELIVERY_CHECK_SECONDS = env.float("DELIVERY_CHECK_SECONDS", default=10.0)
DELIVERY_ALARM_AFTER_SECONDS = env.float("DELIVERY_ALARM_AFTER_SECONDS", default=180.0)
DELIVERY_ALARM_EMAILS = env.list("DELIVERY_ALARM_EMAILS", default=[])
