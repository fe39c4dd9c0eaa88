"""`pytest --redis-cluster`: run the suite against a real 3-master Redis Cluster.

A plugin (loaded with `-p` in pyproject's addopts), not a conftest: pytest-django imports the
settings, which start the servers, before any conftest is read. The option becomes the
environment variable tests/settings.py reads, which xdist workers inherit.
"""

from __future__ import annotations

import os

import pytest

CLUSTER_ENV = "WMS_TEST_REDIS_CLUSTER"
# Set in the process that only hands tests to xdist workers: it starts no cluster of its own.
CONTROLLER_ENV = "WMS_TEST_XDIST_CONTROLLER_PID"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--redis-cluster",
        action="store_true",
        default=False,
        help="run against a 3-master Redis Cluster started on loopback (each xdist worker its own)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    options = early_config.known_args_namespace
    if getattr(options, "redis_cluster", False):
        os.environ[CLUSTER_ENV] = "1"
    if getattr(options, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[CONTROLLER_ENV] = str(os.getpid())
