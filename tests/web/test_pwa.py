"""The installable page's server side (SPEC 12): the manifest, its icons, the service worker,
the warehouse the page opens on, and message type names in the page's language."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from subscriptions.models import MessageType, Subscription
from tests.web.test_views import page_config

pytestmark = pytest.mark.django_db


def png_size(content: bytes) -> tuple[int, int]:
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", content[16:24])
    return width, height


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_manifest_makes_the_page_installable(client: Client):
    response = client.get("/manifest.webmanifest")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = response.json()
    assert manifest["name"] == "WMS Notify"
    assert manifest["start_url"] == "/"
    assert manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    pngs = {}
    for icon in manifest["icons"]:
        fetched = client.get(icon["src"])
        assert fetched.status_code == 200, icon
        if icon["type"] == "image/png":
            size = png_size(body_of(fetched))
            assert icon["sizes"] == f"{size[0]}x{size[1]}"
            pngs[(icon["purpose"], icon["sizes"])] = size
        else:
            assert icon["type"] == "image/svg+xml"
            assert b"<svg" in body_of(fetched)
    # What browsers ask for to offer installing: 192 and 512 px PNGs, and maskable ones.
    assert {("any", "192x192"), ("any", "512x512"), ("maskable", "512x512")} <= set(pngs)


def test_the_service_worker_is_served_from_the_root(client: Client):
    response = client.get("/sw.js")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Cache-Control"] == "no-cache"
    script = response.content.decode()
    # Web Push's handlers come from their own file, and a missing file breaks nothing.
    head = script[: script.index("const VERSION")]
    assert 'try {\n  importScripts("/static/web/js/sw-push.js");\n} catch' in head
    for url in ("/static/web/js/main.js", "/static/web/js/queue.js", "/static/web/app.css"):
        assert f'"{url}"' in script
    shell = json.loads(script.split("const SHELL = ", 1)[1].split(";\n", 1)[0])
    assert not [url for url in shell if url.startswith("/api/")]  # the API is not the shell


def test_the_shell_holds_every_script_the_page_loads(client: Client, make_user):
    """Offline, a module missing from the shell stops every module that imports it: the page
    would open without its scripts."""
    client.force_login(make_user("alice"))
    page = client.get("/").content.decode()
    shell = set(
        json.loads(
            client.get("/sw.js").content.decode().split("const SHELL = ", 1)[1].split(";\n", 1)[0]
        )
    )
    scripts = set(re.findall(r'<script[^>]+src="(/static/[^"]+)"', page))
    folder = Path(settings.BASE_DIR) / "web" / "static" / "web" / "js"
    for path in folder.glob("*.js"):
        imported = re.findall(r'^import .* from "\./([a-z-]+\.js)";$', path.read_text(), re.M)
        scripts.update(f"/static/web/js/{name}" for name in imported)
    assert scripts, "the page loads scripts"
    assert sorted(scripts - shell) == []


def test_the_page_links_the_manifest_and_the_worker(client: Client, make_user):
    client.force_login(make_user("alice"))
    response = client.get("/")
    assert '<link rel="manifest" href="/manifest.webmanifest">' in response.content.decode()
    assert page_config(response)["serviceWorker"] == "/sw.js"


def test_the_page_opens_on_the_default_warehouse(
    client: Client, settings, make_user, role, warehouse, other_warehouse, rep_notice
):
    for wh in (warehouse, other_warehouse):
        Subscription.objects.create(message_type=rep_notice, warehouse=wh, role=role)
    client.force_login(make_user("alice", role))

    assert page_config(client.get("/"))["defaultWarehouse"] == other_warehouse.pk  # BJ02 first
    settings.UI_DEFAULT_WAREHOUSE = "SH01"
    assert page_config(client.get("/"))["defaultWarehouse"] == warehouse.pk
    settings.UI_DEFAULT_WAREHOUSE = "NOPE"  # not offered: the first again
    assert page_config(client.get("/"))["defaultWarehouse"] == other_warehouse.pk


def test_type_names_follow_the_page_language(client: Client, make_user):
    MessageType.objects.create(code="REP_NOTICE", name="补货通知", name_en="Replenishment notice")
    MessageType.objects.create(code="QC_ALERT", name="质检提醒")  # no English name yet
    client.force_login(make_user("alice"))

    # The migrations' SHIFT_HANDOVER and NOTICE types are there too (unless a flush removed
    # them): left out.
    english = page_config(client.get("/", HTTP_ACCEPT_LANGUAGE="en"))["messageTypes"]
    chinese = page_config(client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans"))["messageTypes"]
    for made_by_migrations in ("SHIFT_HANDOVER", "NOTICE"):
        english.pop(made_by_migrations, None)
        chinese.pop(made_by_migrations, None)

    assert english == {"QC_ALERT": "质检提醒", "REP_NOTICE": "Replenishment notice"}
    assert chinese == {"QC_ALERT": "质检提醒", "REP_NOTICE": "补货通知"}
