"""Settings, read from the environment (and an optional `.env` file) with embedded defaults."""

import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from config.redis_connections import connection_class_for
from config.redis_urls import cluster_config, is_cluster_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        # A key everyone can read signs sessions and password-reset links: refuse to start.
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set the SECRET_KEY environment variable (or .env) to a long "
            'random value, e.g. the output of: python3 -c "import secrets; '
            'print(secrets.token_urlsafe(50))" - or set DEBUG=1 for development. '
            "(`manage.py demo` makes its own, kept in var/.)"
        )
    SECRET_KEY = "insecure-development-key-used-only-with-debug"  # noqa: S105 (DEBUG only)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS (off by default: development and tests speak plain HTTP) ---------------------
# A deployment behind HTTPS sets these, under Django's own names; with them set,
# `manage.py check --deploy --fail-level WARNING` passes.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=False)
# Behind a proxy that terminates TLS: e.g. "HTTP_X_FORWARDED_PROTO,https" (only if the proxy
# always sets that header itself).
SECURE_PROXY_SSL_HEADER = (
    tuple(env.list("SECURE_PROXY_SSL_HEADER"))
    if env("SECURE_PROXY_SSL_HEADER", default="")
    else None
)

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
    "directory",  # who is asking: tokens, users, roles, warehouses (a per-process cache)
    "subscriptions",
    "notifications",
    "messaging",
    "push",  # Web Push of critical alerts to closed tabs (SPEC section 12)
    "shifts",  # who is on shift, and the handover at each shift end (SPEC section 13)
    "outbox",  # what the server sends out (webhooks, e-mails): one row each, sent by a task
    "actions",  # alert actions, reminders until claimed, e-mail when unclaimed (SPEC 14)
    "notices",  # notices everyone must read: acknowledgements, roster, reminders (SPEC 15)
    "delivery",  # the delivery objective per warehouse, proven by canaries (SPEC 16)
    "quiet",  # planned silences and mutes with a severity floor (SPEC 17)
    "rules",  # Python and SQL rules: scheduled scans that raise alerts (SPEC 4 and 10)
    "web",
    "inventory",  # demo only: a stand-in for WMS business tables (bins and their stock)
    "demo",
    "axes",  # login throttling
]

MIDDLEWARE = [
    "config.metrics.MetricsMiddleware",  # first: times everything below it
    # Users, roles, tokens and warehouses are cached per process: read their version once.
    "directory.middleware.DirectoryMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # After LocaleMiddleware so its 413 speaks the client's language.
    "config.middleware.ApiBodyLimitMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.RedisErrorMiddleware",
    # Last, as django-axes asks: it turns a throttled login into the lockout page.
    "axes.middleware.AxesMiddleware",
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
# UI's files are small (docs/operating/running.md, "Web server").
warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume synchronous")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# --- Login throttling (django-axes) -------------------------------------------------------
# After LOGIN_FAILURE_LIMIT failed sign-ins for one user name, or from one address (whatever the
# user names), further attempts for it are refused for LOGIN_COOLOFF_MINUTES (the UI's and the
# admin's login alike; the API's tokens are not logins). Attempts are kept in the database
# (axes_* tables); `manage.py axes_reset` lifts every lock. The address is the client's as
# config/client_address.py finds it: X-Forwarded-For is believed only from TRUSTED_PROXIES
# (addresses or networks; the default is an nginx on the same host, as
# docs/operating/deploy.md ships).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, with a session's user read from the directory's per-process
    # cache (exact: a deactivation or a new password is seen at the next request).
    "directory.backends.DirectoryModelBackend",
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("LOGIN_COOLOFF_MINUTES", default=15.0))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # each on its own, not the pair
# Not axes' own reset on success: it also forgets the address's failures, so a password sprayer
# signing in to their own account every few tries would never be locked out. A success clears
# the failures of that user name only (web/signals.py).
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "web.lockout.locked_out"
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=["127.0.0.1", "::1"])
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_address"

# --- Redis -------------------------------------------------------------------------------
# REDIS_URL holds the product's data (subscription mirror, inboxes, chats, rules). The product's
# data is never reached through the cache API: the cache API may swallow errors, and primary
# data must not.
#
# One Redis (`redis://…`): data, cache and Celery broker share it (each can be moved with its
# own setting). Redis Cluster (`redis+cluster://host:port[,host:port…]`, or REDIS_CLUSTER=1 with
# a `redis://` startup node): the data goes to the cluster through redis-py's RedisCluster,
# while the Celery broker and the cache stay on the plain Redis of CELERY_BROKER_URL, which
# must then be set: kombu has no cluster transport, and django-redis no cluster client.
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
REDIS_CLUSTER = env.bool("REDIS_CLUSTER", default=False) or is_cluster_url(REDIS_URL)
_redis_cluster = cluster_config(REDIS_URL) if REDIS_CLUSTER else None
REDIS_CLUSTER_NODES = _redis_cluster.nodes if _redis_cluster else []
REDIS_CLUSTER_OPTIONS = _redis_cluster.options if _redis_cluster else {}
if REDIS_CLUSTER and not env("CELERY_BROKER_URL", default=""):
    raise ImproperlyConfigured(
        "REDIS_URL points at a Redis Cluster, which cannot hold the Celery broker (kombu has no "
        "cluster transport) nor the django-redis cache: set CELERY_BROKER_URL to a plain Redis "
        "(redis://host:port/0); the cache goes there too."
    )
REDIS_CONNECT_TIMEOUT = env.float("REDIS_CONNECT_TIMEOUT", default=2.0)
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=2.0)
# Publishing waits until this many replicas have the notification (Redis WAIT), at most
# REDIS_WAIT_TIMEOUT_MS: see docs/operating/scaling.md. 0: no wait. When fewer acknowledge
# (a failover left a master without replicas), REDIS_WAIT_POLICY decides: "degrade" keeps
# publishing and raises the alarm (/healthz degraded, /metrics), "refuse" answers 503 and,
# when the master has too few replicas to begin with, stores nothing.
REDIS_WAIT_REPLICAS = env.int("REDIS_WAIT_REPLICAS", default=0)
REDIS_WAIT_TIMEOUT_MS = env.int("REDIS_WAIT_TIMEOUT_MS", default=500)
REDIS_WAIT_POLICY = env.str("REDIS_WAIT_POLICY", default="degrade")
if REDIS_WAIT_POLICY not in ("degrade", "refuse"):
    raise ImproperlyConfigured('REDIS_WAIT_POLICY must be "degrade" or "refuse".')
# How long an Idempotency-Key's record is kept (SPEC 11: 24 h).
IDEMPOTENCY_TTL_SECONDS = env.int("IDEMPOTENCY_TTL_SECONDS", default=24 * 3600)
# Every key the product writes starts with this prefix (see each app's keys.py).
WMS_REDIS_PREFIX = env("WMS_REDIS_PREFIX", default="wms")

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        # In cluster mode the cache lives on the broker's plain Redis (see above).
        "LOCATION": env("CELERY_BROKER_URL") if REDIS_CLUSTER else REDIS_URL,
        "KEY_PREFIX": f"{WMS_REDIS_PREFIX}:cache",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT,
            "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
            "CONNECTION_POOL_KWARGS": {
                "health_check_interval": 30,
                # Counts Redis errors for /metrics; the class matches the URL's scheme.
                "connection_class": connection_class_for(
                    env("CELERY_BROKER_URL") if REDIS_CLUSTER else REDIS_URL
                ),
            },
        },
    },
}
# Sessions are read from Redis (with the directory's version, in one round trip) and kept in the
# database too, so a Redis flush or restart signs nobody out (docs/architecture/directory.md,
# "Sessions").
SESSION_ENGINE = "directory.sessions"

# --- Celery ------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# Worker and beat outlive a Redis restart or failover: they reconnect, for as long as it takes.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A role change (REPLICAOF) answers the worker's BRPOP with "UNBLOCKED force unblock", which
# kombu counts as a channel error, not a connection error: without this the worker exits.
CELERY_BROKER_CHANNEL_ERROR_RETRY = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
    "socket_keepalive": True,
    "retry_on_timeout": True,
    # Ping idle connections, so one cut by a restart is noticed and replaced, not hung on.
    "health_check_interval": 10,
}
# Queues: the scheduled passes (escalation, handover, snooze wake-ups, rules, sweeps) and most
# tasks run on Celery's default queue; what waits on the outside has a queue of its own, which
# its app declares on its tasks (`@shared_task(queue=...)`): pushes (`push`), the outbox
# (webhooks, e-mail; OUTBOX_QUEUE below) and the admin's runs of SQL rules (`rules`), so none of
# them ever delays an escalation or a handover. A worker started without -Q consumes every one
# of them (config/queues.py); production runs a worker per queue (Procfile.production).
CELERY_TASK_DEFAULT_QUEUE = "celery"
# Every worker reports the queues it consumes this often (its report lasts three times as
# long); /healthz names the product's queues that no worker reported (config/queues.py).
QUEUE_HEARTBEAT_SECONDS = env.float("QUEUE_HEARTBEAT_SECONDS", default=10.0)
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Filled by the apps, each with its own entries, from their AppConfig.ready()
# (config.beat_schedule.register): settings name no feature's task. Two beats started by mistake
# must not run a sweep or the rules twice: every entry's messages carry their interval and the
# task class claims each tick in Redis first (config/beat.py).
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {}
# How often beat compares the subscriptions' Redis mirror with the database.
SUBSCRIPTION_RECONCILE_SECONDS = env.float("SUBSCRIPTION_RECONCILE_SECONDS", default=30.0)

# --- REST API ----------------------------------------------------------------------------
# The largest request body (Django's default, 2.5 MB): the API's parsers read no more, JSON and
# XML alike, and answer 413 beyond it.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # DRF's TokenAuthentication with the token and user cached per process (exactly:
        # directory.cache), so a poll costs no database query.
        "directory.authentication.CachedTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "config.json_renderer.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    # JSON without NaN / Infinity / deep nesting, every body capped before parsing.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "config.negotiation.ContentNegotiation",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["config.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": env("API_THROTTLE_RATE", default="1200/min")},
}

# The OpenAPI schema (/api/schema/) and its docs page (/api/docs/) need a signed-in user when
# DEBUG is off; this opens them to everyone (config/api_docs.py).
API_DOCS_PUBLIC = env.bool("API_DOCS_PUBLIC", default=False)
SPECTACULAR_SETTINGS = {
    "TITLE": "WMS notifications and chat API",
    "DESCRIPTION": "Notifications polled by warehouse clients, and chat between operators.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"ChatKindEnum": [("group", "group"), ("direct", "direct")]},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.document_errors",  # 400, 401, 403, 404, 413, 429, 503 and their shape
    ],
}

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

# --- Shifts (SPEC 13) ---------------------------------------------------------------------
# Beat looks for shift ends this often; a shift end up to SHIFT_HANDOVER_LOOKBACK_SECONDS ago
# that has no handover yet gets one (so a beat or worker down for less than that loses none).
SHIFT_HANDOVER_SECONDS = env.float("SHIFT_HANDOVER_SECONDS", default=15.0)
SHIFT_HANDOVER_LOOKBACK_SECONDS = env.int("SHIFT_HANDOVER_LOOKBACK_SECONDS", default=3600)
# A handover reads the role's inbox this many notifications per Redis call, and lists at most
# this many alerts per section (its counts stay exact beyond it).
SHIFT_HANDOVER_BATCH = env.int("SHIFT_HANDOVER_BATCH", default=200)
SHIFT_HANDOVER_MAX_ITEMS = env.int("SHIFT_HANDOVER_MAX_ITEMS", default=50)

# --- Snooze (SPEC section 13) -------------------------------------------------------------
# A snooze may run at most this long; beat wakes due snoozes this often, at most this many per
# Redis read per warehouse.
NOTIFICATION_SNOOZE_MAX_SECONDS = env.int("NOTIFICATION_SNOOZE_MAX_SECONDS", default=7 * 86400)
NOTIFICATION_SNOOZE_WAKE_SECONDS = env.float("NOTIFICATION_SNOOZE_WAKE_SECONDS", default=15.0)
NOTIFICATION_SNOOZE_BATCH = env.int("NOTIFICATION_SNOOZE_BATCH", default=100)
# --- A quiet floor (SPEC 17) ----------------------------------------------------------------
# Beat looks for ended planned silences this often; their held-back alerts are woken at most this
# many per Redis call. A mute may run at most this long.
SILENCE_CHECK_SECONDS = env.float("SILENCE_CHECK_SECONDS", default=30.0)
SILENCE_WAKE_BATCH = env.int("SILENCE_WAKE_BATCH", default=20)
MUTE_MAX_SECONDS = env.int("MUTE_MAX_SECONDS", default=12 * 3600)
# The Snoozed list of the page shows at most this many.
NOTIFICATION_SNOOZED_LIST_MAX = env.int("NOTIFICATION_SNOOZED_LIST_MAX", default=200)

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
# Beat purges old messages and drops idle chats this often.
CHAT_SWEEP_SECONDS = env.float("CHAT_SWEEP_SECONDS", default=3600.0)

# --- Web Push (SPEC section 12) ------------------------------------------------------------
# The VAPID key pair (base64url: the raw 32-byte private key, the 65-byte public point) and the
# contact the push services see (`mailto:` or `https:`). Without the keys, a pair is generated
# once and kept in the database (push.keys); `manage.py webpush_keys` prints a new pair.
WEB_PUSH_VAPID_PRIVATE_KEY = env("WEB_PUSH_VAPID_PRIVATE_KEY", default="")
WEB_PUSH_VAPID_PUBLIC_KEY = env("WEB_PUSH_VAPID_PUBLIC_KEY", default="")
WEB_PUSH_SUBJECT = env("WEB_PUSH_SUBJECT", default="mailto:webpush@example.com")
# The only hosts the server ever posts to: the push services of Chrome, Edge, Firefox, Safari
# and Opera. An entry is a host name (port 443), `host:port`, or `*.domain` for its subdomains.
WEB_PUSH_ALLOWED_HOSTS = env.list(
    "WEB_PUSH_ALLOWED_HOSTS",
    default=[
        "fcm.googleapis.com",
        "android.googleapis.com",
        "updates.push.services.mozilla.com",
        "push.services.mozilla.com",
        "web.push.apple.com",
        "*.push.apple.com",
        "*.notify.windows.com",
    ],
)
# Notifications of this severity or higher are pushed (escalations always are).
WEB_PUSH_MIN_SEVERITY = env("WEB_PUSH_MIN_SEVERITY", default="critical")
# The longest one push request may take, all of it: connect, TLS handshake, send, and the
# answer (a request whose status has not come by then counts as unanswered, and is retried).
WEB_PUSH_TIMEOUT_SECONDS = env.float("WEB_PUSH_TIMEOUT_SECONDS", default=10.0)
# An alert's posts go out at once, at most this many at a time (threads of the push worker),
# so one slow push service delays no other browser.
WEB_PUSH_CONCURRENCY = env.int("WEB_PUSH_CONCURRENCY", default=16)
# The most of a push service's answer body that is read; the rest is left unread (the status
# decides the outcome). Push services answer a few hundred bytes at most.
WEB_PUSH_MAX_RESPONSE_BYTES = env.int("WEB_PUSH_MAX_RESPONSE_BYTES", default=64 * 1024)
# A failed push (no answer, 429, 5xx) is retried this many times, waiting twice as long each
# time from the first delay up to the longest (with jitter, and at least a Retry-After).
WEB_PUSH_MAX_RETRIES = env.int("WEB_PUSH_MAX_RETRIES", default=5)
WEB_PUSH_RETRY_FIRST_SECONDS = env.float("WEB_PUSH_RETRY_FIRST_SECONDS", default=10.0)
WEB_PUSH_RETRY_MAX_SECONDS = env.float("WEB_PUSH_RETRY_MAX_SECONDS", default=600.0)
# A user's browsers beyond this many: the oldest subscription makes room for the new one.
WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER = env.int("WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER", default=10)

# --- The outbox: webhooks and e-mails sent by a Celery task (SPEC 14) -------------------------
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

# --- Alert actions, reminders, e-mail when unclaimed (SPEC 14) -----------------------------
# The hosts alert actions' webhooks may be on (`host` = port 443, `host:port`, `*.domain`):
# the SSRF guard of Web Push (outbound/hosts.py). Empty by default: no webhook is
# allowed until an operator lists the WMS's host.
ALERT_WEBHOOK_ALLOWED_HOSTS = env.list("ALERT_WEBHOOK_ALLOWED_HOSTS", default=[])
ALERT_WEBHOOK_TIMEOUT_SECONDS = env.float("ALERT_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
ALERT_ACTION_MAX_ATTEMPTS = env.int("ALERT_ACTION_MAX_ATTEMPTS", default=5)
# Beat sends due reminders and unclaimed e-mails this often, reading at most BATCH due entries
# per Redis call and BATCHES calls per warehouse per tick (the rest wait for the next tick).
ALERT_REMINDER_SECONDS = env.float("ALERT_REMINDER_SECONDS", default=10.0)
ALERT_REMINDER_BATCH = env.int("ALERT_REMINDER_BATCH", default=100)
# Claims that expire (SPEC 17): how often beat lets go of claims held too long with no progress,
# entries per Redis call, calls per warehouse per tick.
CLAIM_EXPIRY_SECONDS = env.float("CLAIM_EXPIRY_SECONDS", default=10.0)
CLAIM_EXPIRY_BATCH = env.int("CLAIM_EXPIRY_BATCH", default=100)
CLAIM_EXPIRY_BATCHES = env.int("CLAIM_EXPIRY_BATCHES", default=10)
ALERT_REMINDER_BATCHES = env.int("ALERT_REMINDER_BATCHES", default=10)
# Notices (SPEC 15): beat reminds unacknowledged members at their next shift start and
# escalates past-due notices this often; a shift start up to NOTICE_REMINDER_LOOKBACK_SECONDS
# ago still reminds (a beat that was down catches up), at most NOTICE_PASS_BATCH notices a pass.
NOTICE_PASS_SECONDS = env.float("NOTICE_PASS_SECONDS", default=10.0)
NOTICE_REMINDER_LOOKBACK_SECONDS = env.int("NOTICE_REMINDER_LOOKBACK_SECONDS", default=1800)
NOTICE_PASS_BATCH = env.int("NOTICE_PASS_BATCH", default=200)
# How many missing members an escalation names in its notification and e-mail (the count is
# always complete; the roster has them all).
NOTICE_ESCALATION_MAX_NAMES = env.int("NOTICE_ESCALATION_MAX_NAMES", default=100)
# E-mail (Django's settings, from the environment). Without EMAIL_HOST, EMAIL_BACKEND decides
# (default: SMTP on localhost:25, through Django's SMTP backend with one time limit for a whole
# send when the outbox sets one: outbound/mail.py); `manage.py demo` writes mails to
# var/mail/ (file backend). EMAIL_TIMEOUT is Django's: per socket operation.
EMAIL_BACKEND = env("EMAIL_BACKEND", default="outbound.mail.EmailBackend")
EMAIL_HOST = env("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", default=str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="wms-notify@localhost")

# --- Rules -------------------------------------------------------------------------------
# Beat asks "which rules are due?" this often; each rule's own interval decides whether it runs.
RULES_TICK_SECONDS = env.float("RULES_TICK_SECONDS", default=15.0)
# A condition that persists is notified again only after this long (a reminder); when it
# clears and comes back it is notified at once. Python rules may set their own.
RULES_DEDUP_COOLDOWN_SECONDS = env.int("RULES_DEDUP_COOLDOWN_SECONDS", default=24 * 3600)
# SQL rules: time limit per query, most rows read per run, and the database alias they read
# (a replica, if the site has one).
RULES_SQL_TIMEOUT_SECONDS = env.float("RULES_SQL_TIMEOUT_SECONDS", default=10.0)
RULES_SQL_MAX_ROWS = env.int("RULES_SQL_MAX_ROWS", default=1000)
# The most a rule's result may bring back in all (bytes of text), and, on SQLite, the longest
# value (text or blob) its query may build (sqlite3_limit LENGTH).
RULES_SQL_MAX_RESULT_BYTES = env.int("RULES_SQL_MAX_RESULT_BYTES", default=4 * 1024 * 1024)
RULES_SQL_MAX_VALUE_BYTES = env.int("RULES_SQL_MAX_VALUE_BYTES", default=1024 * 1024)
# PostgreSQL: the rules role's session (set at every run; create_rules_sql_role sets them on
# the role too): lock and idle-in-transaction timeouts, memory per sort or hash, temporary files.
RULES_SQL_LOCK_TIMEOUT_MS = env.int("RULES_SQL_LOCK_TIMEOUT_MS", default=1000)
RULES_SQL_WORK_MEM = env("RULES_SQL_WORK_MEM", default="16MB")
RULES_SQL_TEMP_FILE_LIMIT = env("RULES_SQL_TEMP_FILE_LIMIT", default="64MB")
RULES_SQL_DATABASE = env("RULES_SQL_DATABASE", default="default")
# Tables (shell-style patterns, no schema) SQL rules may never read: users, groups and
# permissions, API tokens, sessions, the admin log, content types, migrations, login attempts,
# and this product's own tables. The environment variable adds patterns to this list.
RULES_SQL_DENIED_TABLES = [
    *("auth_*", "authtoken_*", "django_*", "axes_*"),
    *("subscriptions_*", "notifications_*", "messaging_*", "push_*", "web_*", "demo_*"),
    *("shifts_*", "outbox_*", "actions_*", "notices_*", "delivery_*", "quiet_*"),
    *env.list("RULES_SQL_DENIED_TABLES", default=[]),
]
# If set, SQL rules may read only tables matching these patterns (and not denied above).
RULES_SQL_ALLOWED_TABLES = env.list("RULES_SQL_ALLOWED_TABLES", default=[])
# PostgreSQL: SQL rules connect as this role, which may only SELECT the allowed tables
# (`manage.py create_rules_sql_role` creates it and grants exactly that).
RULES_SQL_ROLE = env("RULES_SQL_ROLE", default="wms_rules")
RULES_SQL_ROLE_PASSWORD = env("RULES_SQL_ROLE_PASSWORD", default="")
# A run holds its rule this long at most, so a crashed worker never blocks the rule for good.
RULES_LOCK_SECONDS = env.int("RULES_LOCK_SECONDS", default=600)
# Names of Python rules that must not run on their own (run_rules --rule still runs them).
RULES_DISABLED = env.list("RULES_DISABLED", default=[])
# The admin's dry runs run in a Celery worker on the `rules` queue.
# One no worker has started this long after the press is failed (is a worker consuming the
# queue?); one that started and has not finished by its time limit plus the margin is failed
# too (its worker died), so no dry run shows "running" for ever.
RULES_DRY_RUN_WAIT_SECONDS = env.float("RULES_DRY_RUN_WAIT_SECONDS", default=120.0)
RULES_DRY_RUN_MARGIN_SECONDS = env.float("RULES_DRY_RUN_MARGIN_SECONDS", default=30.0)
# --- Orphan sweeps ----------------------------------------------------------------------
# Nothing is left behind forever: data of deleted warehouses, users, rules and chats is removed
# when they are deleted (Celery tasks queued on commit) and, as a backstop, by sweeps that walk
# the keyspace with SCAN, this many keys per call (also the most keys removed per call).
ORPHAN_SWEEP_SECONDS = env.float("ORPHAN_SWEEP_SECONDS", default=3600.0)
ORPHAN_SWEEP_BATCH = env.int("ORPHAN_SWEEP_BATCH", default=500)
# `manage.py demo` sets this: a pick wave every so often lowers demo bin stock (demo only).
WMS_DEMO_PICK_WAVES = env.bool("WMS_DEMO_PICK_WAVES", default=False)
WMS_DEMO_PICK_WAVE_SECONDS = env.float("WMS_DEMO_PICK_WAVE_SECONDS", default=20.0)

# The demo's Replenishment role works Day and Night shifts in each warehouse. So that a
# newcomer sees a handover within minutes, `manage.py demo` moves the change of shift to this
# many minutes after it starts (0: the fixed times, 06:00 and 18:00 local).
WMS_DEMO_SHIFT_CHANGE_MINUTES = env.int("WMS_DEMO_SHIFT_CHANGE_MINUTES", default=3)

# --- Delivery objective (SPEC 16) --------------------------------------------------------
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
# A stream process's hub records that it serves streams this often (one Redis write).
STREAM_BEAT_SECONDS = env.float("STREAM_BEAT_SECONDS", default=10.0)

# --- Operations --------------------------------------------------------------------------
# /metrics (Prometheus) answers only requests bearing `Authorization: Bearer <token>` when set.
METRICS_TOKEN = env("METRICS_TOKEN", default="")

# --- UI ----------------------------------------------------------------------------------
# How often the warehouse page polls the API, and the longest it waits between retries while
# the API is failing (it backs off exponentially from the poll interval up to this).
UI_POLL_INTERVAL_SECONDS = env.float("UI_POLL_INTERVAL_SECONDS", default=10.0)
UI_POLL_MAX_BACKOFF_SECONDS = env.float("UI_POLL_MAX_BACKOFF_SECONDS", default=60.0)
# The warehouse (code) the page opens on for someone who has not picked one yet, when they may
# see it; empty: the first one they receive notifications in. `manage.py demo` sets SH01.
UI_DEFAULT_WAREHOUSE = env("UI_DEFAULT_WAREHOUSE", default="")

# --- Instant delivery (SPEC section 8): the event stream /api/v1/stream/ -------------------
# A comment line at least this often keeps proxies and the browser from closing an idle stream.
STREAM_HEARTBEAT_SECONDS = env.float("STREAM_HEARTBEAT_SECONDS", default=15.0)
# Frames waiting for one slow client before its stream is closed (it reconnects and replays).
STREAM_QUEUE_LIMIT = env.int("STREAM_QUEUE_LIMIT", default=1000)
# How often an open stream checks its credentials, the warehouse and the user's roles again.
STREAM_RECHECK_SECONDS = env.float("STREAM_RECHECK_SECONDS", default=60.0)
# A stream ends after this long and the client reconnects (spreads clients over new processes).
STREAM_MAX_SECONDS = env.float("STREAM_MAX_SECONDS", default=3600.0)
# A stream whose client reads nothing is closed once a write has waited this long (its buffers
# full), and its memory freed.
STREAM_WRITE_TIMEOUT_SECONDS = env.float("STREAM_WRITE_TIMEOUT_SECONDS", default=30.0)
# A stream's socket send buffer and the most its server queues before a write waits: what a
# client that reads nothing can leave unread (with its own receive buffer) before the write
# timeout starts to run. Without it the kernel's buffers would absorb megabytes.
STREAM_SEND_BUFFER_BYTES = env.int("STREAM_SEND_BUFFER_BYTES", default=64 * 1024)
# Open streams per user in one web process: opening one more closes that user's oldest there.
STREAM_MAX_PER_USER = env.int("STREAM_MAX_PER_USER", default=8)
# How often each web process looks whether users, tokens, roles or warehouses changed (one Redis
# GET); when they did, every open stream's access is checked again through the directory.
STREAM_ACCESS_CHECK_SECONDS = env.float("STREAM_ACCESS_CHECK_SECONDS", default=1.0)
# Each stream lasts STREAM_MAX_SECONDS less a random share of up to this part of it, so streams
# opened together do not all end together.
STREAM_LIFETIME_JITTER = env.float("STREAM_LIFETIME_JITTER", default=0.2)
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
    # axes: lock-outs are warnings; each failed attempt (INFO) is in its table already.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}
