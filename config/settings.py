"""Settings, read from the environment (and an optional `.env` file) with embedded defaults."""

import warnings
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

SECRET_KEY = env("SECRET_KEY", default="insecure-development-key-change-me-in-production")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "subscriptions",
    "notifications",
    "messaging",
    "web",
    "inventory",  # demo only: a stand-in for WMS business tables (bins and their stock)
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
# The web server runs config.asgi:application (uvicorn); the WSGI entry point still works for
# everything but the event stream.
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
# Serve app static files straight from their folders so the embedded set-up needs no
# collectstatic step; production can still run collectstatic into STATIC_ROOT.
WHITENOISE_USE_FINDERS = True
# STATIC_ROOT only exists after collectstatic; until then WhiteNoise serves from the finders.
warnings.filterwarnings("ignore", message="No directory at")
# Under ASGI, Django reads a WhiteNoise file response through a thread and warns each time; the
# UI's files are small (README: "Web server").
warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume synchronous")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# --- Redis -------------------------------------------------------------------------------
# One Redis holds the cache, the Celery broker and the product's data (subscription mirror,
# inboxes, chats). The product's data is reached through django-redis's connection pool, never
# through the cache API: the cache API may swallow errors, and primary data must not.
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
REDIS_CONNECT_TIMEOUT = env.float("REDIS_CONNECT_TIMEOUT", default=2.0)
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=2.0)
# Every key the product writes starts with this prefix (see each app's keys.py).
WMS_REDIS_PREFIX = env("WMS_REDIS_PREFIX", default="wms")

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"{WMS_REDIS_PREFIX}:cache",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT,
            "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
            "CONNECTION_POOL_KWARGS": {"health_check_interval": 30},
        },
    },
    # Throttle counters stay in each process: a poll then costs no Redis round trip beyond its
    # one script call, and throttling keeps working while Redis is down.
    "throttle": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "throttle",
    },
}
SESSION_ENGINE = "django.contrib.sessions.backends.db"

# --- Celery ------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": REDIS_CONNECT_TIMEOUT}
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "reconcile-subscriptions": {
        "task": "subscriptions.tasks.reconcile_subscriptions",
        "schedule": env.float("SUBSCRIPTION_RECONCILE_SECONDS", default=30.0),
    },
}

# --- REST API ----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["config.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": env("API_THROTTLE_RATE", default="1200/min")},
}

SPECTACULAR_SETTINGS = {
    "TITLE": "WMS notifications and chat API",
    "DESCRIPTION": "Notifications polled by warehouse clients, and chat between operators.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"ChatKindEnum": [("group", "group"), ("direct", "direct")]},
}

# --- Notifications ---------------------------------------------------------------------
NOTIFICATION_TITLE_MAX_LENGTH = env.int("NOTIFICATION_TITLE_MAX_LENGTH", default=200)
NOTIFICATION_BODY_MAX_LENGTH = env.int("NOTIFICATION_BODY_MAX_LENGTH", default=4000)
NOTIFICATION_DATA_MAX_BYTES = env.int("NOTIFICATION_DATA_MAX_BYTES", default=8 * 1024)
NOTIFICATION_MAX_TTL_SECONDS = env.int("NOTIFICATION_MAX_TTL_SECONDS", default=90 * 24 * 3600)
# Without a cursor, a poll looks back this far.
NOTIFICATION_LOOKBACK_SECONDS = env.int("NOTIFICATION_LOOKBACK_SECONDS", default=3 * 24 * 3600)
NOTIFICATION_PAGE_MAX = 200
NOTIFICATION_PAGE_DEFAULT = 50
NOTIFICATION_SUMMARY_SIZE = 5
NOTIFICATION_MARK_READ_MAX_IDS = 500
# The sweep fetches this many expired notifications at a time, and removes at most this many
# entries per Redis call, so no call blocks Redis for more than a few milliseconds.
NOTIFICATION_SWEEP_BATCH = env.int("NOTIFICATION_SWEEP_BATCH", default=200)
NOTIFICATION_SWEEP_OPS_PER_CALL = env.int("NOTIFICATION_SWEEP_OPS_PER_CALL", default=1000)
CELERY_BEAT_SCHEDULE.update(
    {
        "expire-notifications": {
            "task": "notifications.tasks.expire_notifications",
            "schedule": env.float("NOTIFICATION_SWEEP_SECONDS", default=60.0),
        },
    }
)

# --- Chat --------------------------------------------------------------------------------
CHAT_MESSAGE_MAX_LENGTH = env.int("CHAT_MESSAGE_MAX_LENGTH", default=4000)
CHAT_MAX_MEMBERS = env.int("CHAT_MAX_MEMBERS", default=50)  # the creator included
CHAT_MESSAGES_PAGE_SIZE = env.int("CHAT_MESSAGES_PAGE_SIZE", default=50)
CHAT_MESSAGES_MAX_PAGE_SIZE = env.int("CHAT_MESSAGES_MAX_PAGE_SIZE", default=200)
# A pending fetch returns at most this many messages per chat (the rest on the next fetch),
# so one call never builds an unbounded reply.
CHAT_PENDING_MAX_PER_CHAT = env.int("CHAT_PENDING_MAX_PER_CHAT", default=1000)
CHAT_RECENT_CONTACTS = env.int("CHAT_RECENT_CONTACTS", default=100)
CHAT_CONTACTS_LIMIT = env.int("CHAT_CONTACTS_LIMIT", default=20)  # autocomplete results
CHAT_MESSAGE_RETENTION_DAYS = env.int("CHAT_MESSAGE_RETENTION_DAYS", default=30)
CHAT_IDLE_DAYS = env.int("CHAT_IDLE_DAYS", default=90)
# Retention visits this many chats per round trip and removes at most this many messages per
# Redis call, so no call blocks Redis for long.
CHAT_SWEEP_BATCH = env.int("CHAT_SWEEP_BATCH", default=500)
CELERY_BEAT_SCHEDULE.update(
    {
        "purge-old-chat-messages": {
            "task": "messaging.tasks.purge_old_chat_messages",
            "schedule": env.float("CHAT_SWEEP_SECONDS", default=3600.0),
        },
        "drop-idle-chats": {
            "task": "messaging.tasks.drop_idle_chats",
            "schedule": env.float("CHAT_SWEEP_SECONDS", default=3600.0),
        },
    }
)

# --- Rules -------------------------------------------------------------------------------
# Beat asks "which rules are due?" this often; each rule's own interval decides whether it runs.
RULES_TICK_SECONDS = env.float("RULES_TICK_SECONDS", default=15.0)
# A condition that persists is notified again only after this long (a reminder); when it
# clears and comes back it is notified at once. Python rules may set their own.
RULES_DEDUP_COOLDOWN_SECONDS = env.int("RULES_DEDUP_COOLDOWN_SECONDS", default=24 * 3600)
# SQL rules: time limit per query, most rows read per run, and the database alias they read
# (point it at a read-only user or a replica if the site has one).
RULES_SQL_TIMEOUT_SECONDS = env.float("RULES_SQL_TIMEOUT_SECONDS", default=10.0)
RULES_SQL_MAX_ROWS = env.int("RULES_SQL_MAX_ROWS", default=1000)
RULES_SQL_DATABASE = env("RULES_SQL_DATABASE", default="default")
# A run holds its rule this long at most, so a crashed worker never blocks the rule for good.
RULES_LOCK_SECONDS = env.int("RULES_LOCK_SECONDS", default=600)
# Names of Python rules that must not run on their own (run_rules --rule still runs them).
RULES_DISABLED = env.list("RULES_DISABLED", default=[])
CELERY_BEAT_SCHEDULE.update(
    {
        "run-due-rules": {
            "task": "notifications.rules.tasks.run_due_rules",
            "schedule": RULES_TICK_SECONDS,
            # Ticks queued while no worker ran are dropped: the next tick finds what is due.
            "options": {"expires": RULES_TICK_SECONDS},
        },
    }
)
# `manage.py demo` sets this: a pick wave every so often lowers demo bin stock (demo only).
WMS_DEMO_PICK_WAVES = env.bool("WMS_DEMO_PICK_WAVES", default=False)
if WMS_DEMO_PICK_WAVES:
    CELERY_BEAT_SCHEDULE.update(
        {
            "demo-pick-wave": {
                "task": "inventory.tasks.demo_pick_wave",
                "schedule": env.float("WMS_DEMO_PICK_WAVE_SECONDS", default=20.0),
                "options": {"expires": 20.0},
            },
        }
    )

# --- UI ----------------------------------------------------------------------------------
# How often the warehouse page polls the API, and the longest it waits between retries while
# the API is failing (it backs off exponentially from the poll interval up to this).
UI_POLL_INTERVAL_SECONDS = env.float("UI_POLL_INTERVAL_SECONDS", default=10.0)
UI_POLL_MAX_BACKOFF_SECONDS = env.float("UI_POLL_MAX_BACKOFF_SECONDS", default=60.0)

# --- Instant delivery (SPEC section 8): the event stream /api/v1/stream/ -------------------
# A comment line at least this often keeps proxies and the browser from closing an idle stream.
STREAM_HEARTBEAT_SECONDS = env.float("STREAM_HEARTBEAT_SECONDS", default=15.0)
# Frames waiting for one slow client before its stream is closed (it reconnects and replays).
STREAM_QUEUE_LIMIT = env.int("STREAM_QUEUE_LIMIT", default=1000)
# How often an open stream checks its credentials, the warehouse and the user's roles again.
STREAM_RECHECK_SECONDS = env.float("STREAM_RECHECK_SECONDS", default=60.0)
# A stream ends after this long and the client reconnects (spreads clients over new processes).
STREAM_MAX_SECONDS = env.float("STREAM_MAX_SECONDS", default=3600.0)
# The reconnection delay the stream asks browsers for (SSE `retry:`), in milliseconds.
STREAM_RETRY_MS = env.int("STREAM_RETRY_MS", default=3000)
# The page uses the stream (and falls back to polling) unless this is off; while the stream is
# live it still polls this often, to pick up what events do not carry (reads in other tabs).
UI_STREAM = env.bool("UI_STREAM", default=True)
UI_STREAM_RECONCILE_SECONDS = env.float("UI_STREAM_RECONCILE_SECONDS", default=60.0)

# --- Product settings --------------------------------------------------------------------
# Seconds a client may wait before retrying when Redis is unreachable (the 503's Retry-After).
REDIS_RETRY_AFTER_SECONDS = env.int("REDIS_RETRY_AFTER_SECONDS", default=5)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
