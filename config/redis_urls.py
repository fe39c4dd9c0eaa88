"""Reading REDIS_URL: one Redis (`redis://…`) or a Redis Cluster (`redis+cluster://…`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}  # scheme -> TLS


@dataclass(frozen=True)
class ClusterConfig:
    """Startup nodes and credentials of a Redis Cluster."""

    nodes: list[tuple[str, int]]
    options: dict[str, object] = field(default_factory=dict)


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def cluster_config(url: str) -> ClusterConfig:
    """Nodes and credentials from `redis+cluster://[user:password@]host:port[,host:port…]`
    (or `rediss+cluster://` for TLS); a plain `redis://host:port/…` names one startup node."""
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    options: dict[str, object] = {
        "ssl": CLUSTER_SCHEMES.get(parts.scheme, parts.scheme == "rediss")
    }
    if userinfo:
        username, _, password = userinfo.partition(":")
        options["username"] = unquote(username) or None
        options["password"] = unquote(password) or None
    nodes = []
    for address in hosts.split(","):
        address = address.strip()
        host, _, port = (
            address.rpartition(":")
            if address.rfind(":") > address.rfind("]")
            else (
                address,
                ":",
                "6379",
            )
        )
        if not host or not port.isdigit():
            raise ValueError(f"Expected host:port in the Redis Cluster URL, got {address!r}")
        nodes.append((host.strip("[]"), int(port)))
    return ClusterConfig(nodes=nodes, options=options)
