#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if sys.argv[1:2] == ["demo"]:
        # Settings refuse to load without a SECRET_KEY; the demo brings its own (var/).
        from demo.secret_key import ensure_demo_secret_key

        ensure_demo_secret_key()
    else:
        # A second terminal beside a running `manage.py demo` uses the demo's secret key,
        # Redis and database (var/demo.env), unless they are configured here.
        from demo.environment import apply_demo_environment

        apply_demo_environment()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
