"""WSGI application of the benchmark's server (the product with the floor endpoint added)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")

application = get_wsgi_application()
