"""The notifications app's settings, from the environment (config/app_settings.py)."""

from django.core.exceptions import ImproperlyConfigured

from config.app_settings import env

# --- Notifications ---------------------------------------------------------------------
NOTIFICATION_TITLE_MAX_LENGTH = env.int("NOTIFICATION_TITLE_MAX_LENGTH", default=200)
NOTIFICATION_BODY_MAX_LENGTH = env.int("NOTIFICATION_BODY_MAX_LENGTH", default=4000)
NOTIFICATION_DATA_MAX_BYTES = env.int("NOTIFICATION_DATA_MAX_BYTES", default=8 * 1024)
NOTIFICATION_MAX_TTL_SECONDS = env.int("NOTIFICATION_MAX_TTL_SECONDS", default=90 * 24 * 3600)
# A key that made more than FLAP_MAX alerts (of one type, in one warehouse) within
# FLAP_WINDOW_SECONDS flaps: its next raises fold quietly into its latest alert (SPEC 17).
# 0: nothing flaps.
FLAP_MAX = env.int("FLAP_MAX", default=3)
FLAP_WINDOW_SECONDS = env.int("FLAP_WINDOW_SECONDS", default=900)
# Without a cursor, a poll looks back this far.
NOTIFICATION_LOOKBACK_SECONDS = env.int("NOTIFICATION_LOOKBACK_SECONDS", default=3 * 24 * 3600)
NOTIFICATION_PAGE_MAX = 200
NOTIFICATION_PAGE_DEFAULT = 50
NOTIFICATION_SUMMARY_SIZE = 5
# A poll looks at most this many entries beyond its page (read or expired ones it skips) in one
# call; then `next_since` says how far it got and the next poll goes on from there.
NOTIFICATION_POLL_SCAN_BEYOND_PAGE = env.int("NOTIFICATION_POLL_SCAN_BEYOND_PAGE", default=200)
# A poll leaves expired notifications the sweep has not removed yet out of its counts, looking at
# no more than this many (so its cost does not grow with the sweep's backlog); a bigger backlog
# shows in /metrics as wms_expired_unswept.
NOTIFICATION_POLL_EXPIRED_SCAN = env.int("NOTIFICATION_POLL_EXPIRED_SCAN", default=1000)
NOTIFICATION_MARK_READ_MAX_IDS = 500
# SPEC 17: a non-critical alert beyond this many alerts a user could see in the past hour comes
# quietly to that user (listed and unread; no push, sound or reminder). 0: off. At most 100 (the
# read model keeps the newest 100 raises per set of inboxes for the hour).
NOISE_BUDGET_PER_HOUR = env.int("NOISE_BUDGET_PER_HOUR", default=6)
if not 0 <= NOISE_BUDGET_PER_HOUR <= 100:
    raise ImproperlyConfigured("NOISE_BUDGET_PER_HOUR must be between 0 (off) and 100.")
# The unread summary counts the ones that came quietly among this many of the newest unread.
NOISE_QUIET_SCAN = 100
# The sweep fetches this many expired notifications at a time, and removes at most this many
# entries per Redis call, so no call blocks Redis for more than a few milliseconds.
NOTIFICATION_SWEEP_BATCH = env.int("NOTIFICATION_SWEEP_BATCH", default=200)
NOTIFICATION_SWEEP_OPS_PER_CALL = env.int("NOTIFICATION_SWEEP_OPS_PER_CALL", default=1000)
NOTIFICATION_SWEEP_SECONDS = env.float("NOTIFICATION_SWEEP_SECONDS", default=60.0)

# --- Alert lifecycle (SPEC section 7) -------------------------------------------------
# Beat looks for notifications due for escalation this often (the SPEC asks for 30 s at most),
# escalating at most this many per Redis read per warehouse.
NOTIFICATION_ESCALATION_SECONDS = env.float("NOTIFICATION_ESCALATION_SECONDS", default=15.0)
NOTIFICATION_ESCALATION_BATCH = env.int("NOTIFICATION_ESCALATION_BATCH", default=100)
# The managers' report keeps per-day counts and time-to-claim / time-to-resolve samples this
# many days (the longest `days` the report accepts), at most this many samples per warehouse,
# day and measure (counts stay exact beyond it).
ALERT_REPORT_RETENTION_DAYS = env.int("ALERT_REPORT_RETENTION_DAYS", default=90)
ALERT_REPORT_MAX_SAMPLES_PER_DAY = env.int("ALERT_REPORT_MAX_SAMPLES_PER_DAY", default=20000)

# --- Snooze (SPEC section 13) -------------------------------------------------------------
# A snooze may run at most this long; beat wakes due snoozes this often, at most this many per
# Redis read per warehouse.
NOTIFICATION_SNOOZE_MAX_SECONDS = env.int("NOTIFICATION_SNOOZE_MAX_SECONDS", default=7 * 86400)
NOTIFICATION_SNOOZE_WAKE_SECONDS = env.float("NOTIFICATION_SNOOZE_WAKE_SECONDS", default=15.0)
NOTIFICATION_SNOOZE_BATCH = env.int("NOTIFICATION_SNOOZE_BATCH", default=100)
# The Snoozed list of the page shows at most this many.
NOTIFICATION_SNOOZED_LIST_MAX = env.int("NOTIFICATION_SNOOZED_LIST_MAX", default=200)

# --- Claims that expire (SPEC 17) -------------------------------------------------------
# How often beat lets go of claims held too long with no progress,
# entries per Redis call, calls per warehouse per tick.
CLAIM_EXPIRY_SECONDS = env.float("CLAIM_EXPIRY_SECONDS", default=10.0)
CLAIM_EXPIRY_BATCH = env.int("CLAIM_EXPIRY_BATCH", default=100)
CLAIM_EXPIRY_BATCHES = env.int("CLAIM_EXPIRY_BATCHES", default=10)

# --- Orphan sweeps ----------------------------------------------------------------------
# Nothing is left behind forever: data of deleted warehouses, users, rules and chats is removed
# when they are deleted (Celery tasks queued on commit) and, as a backstop, by sweeps that walk
# the keyspace with SCAN, this many keys per call (also the most keys removed per call). The
# chat's sweep reads them too; `manage.py sweep_orphans` (this app's) runs every app's sweep.
ORPHAN_SWEEP_SECONDS = env.float("ORPHAN_SWEEP_SECONDS", default=3600.0)
ORPHAN_SWEEP_BATCH = env.int("ORPHAN_SWEEP_BATCH", default=500)
