"""Production defaults: no start without a SECRET_KEY (DEBUG off), HTTPS settings from the
environment pass Django's deployment checks, and the demo still starts from a fresh clone."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from gunicorn.workers.sync import SyncWorker

from config.gunicorn_worker import JsonErrorSyncWorker
from demo.secret_key import ensure_demo_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
HTTPS = {
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    """manage.py with the project's own settings and only the given variables set."""
    clean = {
        k: v
        for k, v in os.environ.items()
        # DJANGO_ALLOW_ASYNC_UNSAFE: set by the browser tests' live server in this process.
        if k not in {"SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
        and k not in HTTPS
    }
    clean.update(env, DJANGO_SETTINGS_MODULE="config.settings")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_a_secret_key_the_project_refuses_to_start():
    result = manage("check")

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set." in result.stderr


def test_debug_may_run_without_a_secret_key():
    assert manage("check", DEBUG="1").returncode == 0


def test_check_deploy_passes_with_the_https_settings_from_the_environment():
    key = secrets.token_urlsafe(50)

    plain = manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=key)
    https = manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=key, **HTTPS)

    assert plain.returncode != 0
    assert "security.W004" in plain.stderr
    assert https.returncode == 0, https.stderr
    assert "no issues" in https.stdout


def test_the_demo_command_starts_without_a_secret_key_in_the_environment():
    result = manage("demo", "--help")

    assert result.returncode == 0, result.stderr
    assert "--setup-only" in result.stdout


def test_the_demo_key_is_made_once_and_kept_private(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    path = tmp_path / "var" / "demo-secret-key"

    first = ensure_demo_secret_key(path)
    monkeypatch.delenv("SECRET_KEY")
    second = ensure_demo_secret_key(path)

    assert first == second
    assert len(first) >= 50
    assert os.environ["SECRET_KEY"] == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_secret_key_from_the_environment_wins_over_the_demo_key(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "from-the-environment")

    assert ensure_demo_secret_key(tmp_path / "key") == "from-the-environment"
    assert not (tmp_path / "key").exists()


@pytest.mark.parametrize("name", sorted(HTTPS))
def test_https_settings_default_to_plain_http(name, settings):
    assert not getattr(settings, name)


def test_production_serves_the_api_under_gunicorn_and_the_stream_under_uvicorn():
    """Procfile.production's shape (docs/operating/deploy.md): the REST API and the admin under a
    WSGI server with sync workers, the event stream under the ASGI one; gunicorn is a pinned runtime
    dependency."""
    lines = dict(
        line.split(":", 1)
        for line in (BASE_DIR / "Procfile.production").read_text().splitlines()
        if line.strip()
    )
    assert lines["web"].split()[:2] == ["gunicorn", "config.wsgi:application"]
    # gunicorn's sync worker, answering what gunicorn itself refuses in JSON.
    assert "--worker-class config.gunicorn_worker.JsonErrorSyncWorker" in lines["web"]
    assert issubclass(JsonErrorSyncWorker, SyncWorker)
    # The proxies whose X-Forwarded-Proto gunicorn believes are the ones Django trusts.
    assert '--forwarded-allow-ips "${TRUSTED_PROXIES:-127.0.0.1,::1}"' in lines["web"]
    assert lines["stream"].split()[:2] == ["uvicorn", "config.asgi:application"]
    assert "${STREAM_PORT:-8001}" in lines["stream"]
    pyproject = (BASE_DIR / "pyproject.toml").read_text()
    runtime = pyproject.split("[project.optional-dependencies]")[0]
    assert '"gunicorn==' in runtime
