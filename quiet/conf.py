"""The quiet floor's settings (SPEC 17), from the environment (config/app_settings.py)."""

from config.app_settings import env

# Beat looks for ended planned silences this often; their held-back alerts are woken at most this
# many per Redis call. A mute may run at most this long.
SILENCE_CHECK_SECONDS = env.float("SILENCE_CHECK_SECONDS", default=30.0)
SILENCE_WAKE_BATCH = env.int("SILENCE_WAKE_BATCH", default=20)
MUTE_MAX_SECONDS = env.int("MUTE_MAX_SECONDS", default=12 * 3600)
