"""Test settings: the project's settings, pointed at a real redis-server started for this run.

pytest-django imports settings before any conftest runs, so the server starts here, once per
test process (each xdist worker gets its own), on a free port; it stops when the process exits.

With `pytest --redis-cluster` (tests/redis_option.py) the product's data goes to a real
3-master Redis Cluster started here as well, and the plain server holds the Celery broker and
the cache, as in production.
"""

import atexit
import os

from devredis import embedded_redis
from tests.redis_option import CLUSTER_ENV, CONTROLLER_ENV

REDIS_SERVER = embedded_redis.start()
atexit.register(REDIS_SERVER.stop)
REDIS_CLUSTER_UNDER_TEST = None
if not os.environ.get(CLUSTER_ENV):
    os.environ["REDIS_URL"] = REDIS_SERVER.url
elif os.environ.get(CONTROLLER_ENV) == str(os.getpid()):
    # The xdist controller runs no test: a placeholder address, never connected to.
    os.environ["REDIS_URL"] = "redis+cluster://127.0.0.1:1"
    os.environ["CELERY_BROKER_URL"] = REDIS_SERVER.url
else:
    from devredis import embedded_cluster

    REDIS_CLUSTER_UNDER_TEST = embedded_cluster.start_cluster(masters=3)
    atexit.register(REDIS_CLUSTER_UNDER_TEST.stop)
    os.environ["REDIS_URL"] = REDIS_CLUSTER_UNDER_TEST.url
    os.environ["CELERY_BROKER_URL"] = REDIS_SERVER.url
os.environ.setdefault("SECRET_KEY", "test-only-secret")

from config.settings import *  # noqa: E402,F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Short timeouts so outage tests fail fast instead of waiting on a dead server.
REDIS_CONNECT_TIMEOUT = 0.5
CACHES["default"]["OPTIONS"]["SOCKET_CONNECT_TIMEOUT"] = 0.5  # noqa: F405
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"user": "100000/min"}}  # noqa: F405
CELERY_BEAT_SCHEDULE_FILENAME = os.path.join(REDIS_SERVER.data_dir, "celerybeat-schedule")
# PostgreSQL: the role SQL rules connect as; the tests create it with the management command
# (tests/rules_sql_role.py), which needs CREATEROLE (see .ci/run).
RULES_SQL_ROLE = "wms_rules_ci"
RULES_SQL_ROLE_PASSWORD = "wms_rules_ci"
