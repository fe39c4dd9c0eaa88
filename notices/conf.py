"""The notices app's settings (SPEC 15), from the environment (config/app_settings.py)."""

from config.app_settings import env

# Beat reminds unacknowledged members at their next shift start and escalates past-due notices
# this often; a shift start up to NOTICE_REMINDER_LOOKBACK_SECONDS ago still reminds (a beat
# that was down catches up), at most NOTICE_PASS_BATCH notices a pass.
NOTICE_PASS_SECONDS = env.float("NOTICE_PASS_SECONDS", default=10.0)
NOTICE_REMINDER_LOOKBACK_SECONDS = env.int("NOTICE_REMINDER_LOOKBACK_SECONDS", default=1800)
NOTICE_PASS_BATCH = env.int("NOTICE_PASS_BATCH", default=200)
# How many missing members an escalation names in its notification and e-mail (the count is
# always complete; the roster has them all).
NOTICE_ESCALATION_MAX_NAMES = env.int("NOTICE_ESCALATION_MAX_NAMES", default=100)
