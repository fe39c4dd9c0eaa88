"""ASGI application of benchmarks/holding.py's row 16 servers: benchmarks.asgi's, with the
piece named by BENCH_WITHOUT switched off by a monkeypatch in each worker (empty: the product
as it is). For the measurement only; the product has no such setting."""

import os

from benchmarks import holding
from benchmarks.asgi import application

holding.switch_off_in_server(os.environ.get("BENCH_WITHOUT", ""))

__all__ = ["application"]
