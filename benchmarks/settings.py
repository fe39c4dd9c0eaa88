"""Settings of the benchmark's server: the project's own, plus the floor endpoint's URLconf.

Only the URLconf differs (benchmarks/urls.py adds the constant endpoint the polls are
compared with); everything a request passes through is the product's.
"""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.urls"
DEBUG = False
