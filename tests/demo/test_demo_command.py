"""The newcomer's path (README, "Two commands" and "Try it"): `manage.py demo` in one terminal,
the README's `manage.py publish …` in a second one with nothing set by hand; the page opens in
SH01, where the README's story is; a Redis that dies comes back with its data.

One real demo (web, worker, beat, embedded Redis) runs for the module, on free ports and in a
folder of its own (WMS_DEMO_DIR), so it never meets a demo a developer runs in this checkout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis
from django.conf import settings

from demo.environment import read_demo_environment
from devredis.embedded_redis import free_port
from tests.waiting import eventually

BASE_DIR = Path(settings.BASE_DIR)
# The README's second-terminal command, word for word.
README_PUBLISH = [
    "manage.py", "publish", "--type", "REP_NOTICE", "--warehouse", "SH01",
    "--title", "Replenish A-01-03", "--data", '{"bin": "A-01-03", "qty": -12}',
]  # fmt: skip


def terminal_env(**extra: str) -> dict[str, str]:
    """A new terminal: nothing of this test process's configuration, only PATH and friends."""
    kept = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "TMPDIR"}}
    return {**kept, **extra}


@dataclass
class Demo:
    process: subprocess.Popen[str]
    url: str
    redis_port: int
    folder: Path
    log: Path

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    folder = tmp_path_factory.mktemp("demo")
    web_port, redis_port = free_port(), free_port()
    env = terminal_env(
        WMS_DEMO_DIR=str(folder),
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        WMS_DEMO_PICK_WAVES="0",
        RULES_DISABLED="negative_bin_stock,bin_stock_out",
    )
    log = folder / "demo.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(web_port),
             "--redis-port", str(redis_port)],
            cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
    running = Demo(process, f"http://127.0.0.1:{web_port}", redis_port, folder, log)
    try:
        started = eventually(
            lambda: running.healthy() or process.poll() is not None, timeout=180, interval=0.5
        )
        assert started, f"the demo did not start:\n{running.output()}"
        assert process.poll() is None, f"the demo exited:\n{running.output()}"
        yield running
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_the_demo_writes_its_environment_for_a_second_terminal(demo):
    path = demo.folder / "demo.env"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the secret key
    values = dict(line.split("=", 1) for line in path.read_text().splitlines())
    assert values["REDIS_URL"] == f"redis://127.0.0.1:{demo.redis_port}/0"
    assert len(values["SECRET_KEY"]) >= 50
    assert int(values["WMS_DEMO_PID"]) == demo.process.pid


def test_the_readmes_publish_works_in_a_second_terminal(demo):
    result = subprocess.run(
        [sys.executable, *README_PUBLISH],
        cwd=BASE_DIR,
        env=terminal_env(WMS_DEMO_DIR=str(demo.folder)),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert re.search(r"to [1-9][0-9]* inbox", result.stdout), result.stdout


def test_the_page_opens_in_sh01_for_alice(demo):
    with httpx.Client(base_url=demo.url, timeout=10, follow_redirects=True) as browser:
        login = browser.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert token
        page = browser.post(
            "/login/",
            data={"username": "alice", "password": "demo12345", "csrfmiddlewaretoken": token[1]},
            headers={"Referer": f"{demo.url}/login/"},
        )
    found = re.search(
        r'<script id="wms-config" type="application/json">(.*?)</script>', page.text, re.S
    )
    assert found, page.text[:500]
    config = json.loads(found[1])
    codes = {w["id"]: w["code"] for w in config["warehouses"]}
    assert codes[config["defaultWarehouse"]] == "SH01"


def test_the_demos_worker_runs_a_dry_run_pressed_in_the_admin(demo):
    """The demo's one worker consumes the queue of dry runs too (Procfile: -Q celery,rules)."""
    with httpx.Client(base_url=demo.url, timeout=10, follow_redirects=True) as browser:

        def post(path: str, page: str, **data: str) -> httpx.Response:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
            assert token, page[:500]
            headers = {"Referer": f"{demo.url}{path}"}
            return browser.post(
                path, data={**data, "csrfmiddlewaretoken": token[1]}, headers=headers
            )

        login = browser.get("/admin/login/")
        post("/admin/login/", login.text, username="admin", password="demo12345", next="/admin/")
        rules = browser.get("/admin/rules/sqlrule/").text
        found = re.search(r'href="/admin/rules/sqlrule/(\d+)/change/', rules)
        assert found, rules[:500]
        change = browser.get(f"/admin/rules/sqlrule/{found[1]}/change/").text
        pressed = post(f"/admin/rules/sqlrule/{found[1]}/dry-run/", change)
        assert "Dry run of SQL rules" in pressed.text, pressed.text

        assert eventually(
            lambda: "Passed (asked for by admin" in browser.get(str(pressed.url)).text,
            timeout=60,
            interval=0.5,
        ), demo.output()[-3000:]


def test_a_redis_that_dies_comes_back_with_its_data(demo):
    client = redis.Redis(port=demo.redis_port, socket_timeout=2, socket_connect_timeout=1)
    client.set("wms:demo-test:kept", "yes")
    pid = client.info("server")["process_id"]

    os.kill(pid, signal.SIGKILL)

    assert eventually(demo.healthy, timeout=60, interval=0.5), demo.output()
    assert client.info("server")["process_id"] != pid
    assert client.get("wms:demo-test:kept") == b"yes"  # the append-only file kept it
    assert "starting it again" in demo.output()


def test_stopping_the_demo_removes_its_environment(demo):
    """Last in this module: Ctrl-C ends the demo; a second terminal no longer finds it."""
    os.killpg(demo.process.pid, signal.SIGINT)
    demo.process.wait(timeout=60)

    assert not (demo.folder / "demo.env").exists()
    os.environ["WMS_DEMO_DIR"] = str(demo.folder)
    try:
        assert read_demo_environment() == {}
    finally:
        del os.environ["WMS_DEMO_DIR"]
