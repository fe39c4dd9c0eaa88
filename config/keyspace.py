"""Helpers for walking the Redis keyspace (orphan sweeps); key names stay in the apps' keys.py."""


def glob_escape(text: str) -> str:
    """`text` as a literal inside a SCAN MATCH pattern (Redis glob: * ? [ ] and \\ escape)."""
    return "".join("\\" + c if c in "*?[]\\{}" else c for c in text)
