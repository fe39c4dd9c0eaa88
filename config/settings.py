"""Settings, read from the environment (and an optional `.env` file) with embedded defaults."""

import warnings
from datetime import timedelta
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from config.app_settings import BASE_DIR, apps_settings, env
from config.redis_connections import connection_class_for
from config.redis_urls import cluster_config, is_cluster_url

VAR_DIR = BASE_DIR / "var"

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
    "stream",  # the event stream /api/v1/stream/ (SPEC 8), beside Django (config/asgi.py)
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
# (webhooks, e-mail; the outbox's OUTBOX_QUEUE) and the admin's runs of SQL rules (`rules`), so
# none of them ever delays an escalation or a handover. A worker started without -Q consumes
# every one of them (config/queues.py); production runs a worker per queue (Procfile.production).
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

# --- E-mail (Django's settings) --------------------------------------------------------------
# Without EMAIL_HOST, EMAIL_BACKEND decides (default: SMTP on localhost:25, through Django's SMTP
# backend with one time limit for a whole send when the outbox sets one: outbound/mail.py);
# `manage.py demo` writes mails to var/mail/ (file backend). EMAIL_TIMEOUT is Django's: per
# socket operation.
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

# --- Operations --------------------------------------------------------------------------
# /metrics (Prometheus) answers only requests bearing `Authorization: Bearer <token>` when set.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
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

# --- The apps' own settings -----------------------------------------------------------------
# Each installed app of this repository declares its settings (its limits, intervals, batches),
# from the same environment, in its own `conf.py`: they are added here, and are ordinary
# settings from then on (config/app_settings.py).
globals().update(apps_settings(INSTALLED_APPS, taken=globals()))
