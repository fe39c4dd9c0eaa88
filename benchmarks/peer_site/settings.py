"""Settings of the peer site: django-notifications-hq as its README installs it, nothing more.

Run only by the peer's own venv with this directory as the working directory (see
benchmarks/peer.py), so `notifications` here is the peer's package, never the project's.
The benchmark passes everything that varies through the environment:

- `PEER_SECRET_KEY`: one per run, the same for the preparing script and every worker (the
  session data and the user's session hash are signed with it);
- `PEER_DATABASE_URL` (`postgres://user:password@host:port/name`, no host: the local socket),
  else `PEER_SQLITE_PATH`.
"""

import os
from typing import Any
from urllib.parse import unquote, urlsplit

SECRET_KEY = os.environ["PEER_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    # Django's default session engine (database sessions), as the peer's views expect a login
    # (login_required) and the peer sets up nothing else.
    "django.contrib.sessions",
    "notifications",
]

# `django-admin startproject`'s middleware, without the messages framework (not installed).
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "urls"
WSGI_APPLICATION = "wsgi.application"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"


def _database() -> dict[str, Any]:
    url = os.environ.get("PEER_DATABASE_URL")
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["PEER_SQLITE_PATH"]}
    parts = urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        # Persistent connections, as a production site on PostgreSQL runs: a new connection
        # (and its authentication) per request would measure the connect, not the peer.
        "CONN_MAX_AGE": 600,
    }


DATABASES = {"default": _database()}

# DEBUG is off: without this a 500's traceback would go nowhere, and the benchmark shows the
# server's log tail when an answer is not what it expects.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
}
