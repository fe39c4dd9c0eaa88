"""Get the peer's database ready and log its two users in: run by the peer venv's Python.

    python prepare.py BIG SMALL

Migrates, loads the data unless this configuration's is already there (benchmarks/peer_site/
loader.py), and creates one database session for `peer-big` and one for `peer-small`, as
Django's `login()` would. Progress goes to stdout line by line; the last line is JSON:
`{"vendor": …, "rows": …, "django": …, "sessions": {"big": KEY, "small": KEY}}`.
"""

from __future__ import annotations

import json
import os
import sys


def say(text: str) -> None:
    print(text, flush=True)


def session_key(username: str) -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = user._meta.pk.value_to_string(user)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    assert session.session_key is not None
    return session.session_key


def main(big: int, small: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
    import django

    django.setup()
    import loader  # imports the peer's models: only once Django is set up
    from django.contrib.sessions.models import Session
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    if loader.is_loaded(big, small):
        say("the peer's data is already loaded")
    else:
        loader.load(big, small, say)
    Session.objects.all().delete()  # the sessions of earlier runs
    result = {
        "vendor": connection.vendor,
        "rows": loader.expected_rows(big, small),
        "django": django.get_version(),
        "sessions": {"big": session_key("peer-big"), "small": session_key("peer-small")},
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
