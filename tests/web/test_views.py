"""The warehouse UI's server side: access, the page's configuration, i18n, and safety checks."""

from __future__ import annotations

import gettext
import json
import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from subscriptions.models import Subscription, Warehouse
from web.selectors import warehouse_choices_for

pytestmark = pytest.mark.django_db

STATIC_JS = Path(settings.BASE_DIR) / "web" / "static" / "web" / "js"
LOCALE = Path(settings.BASE_DIR) / "locale"


def page_config(response) -> dict:
    match = re.search(
        r'<script id="wms-config" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    assert match, "the page carries its configuration as JSON"
    return json.loads(match.group(1))


def test_anonymous_visitors_are_sent_to_the_login_page(client: Client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next=/"


def test_login_page_renders_and_signs_in(client: Client, make_user):
    make_user("alice")
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert b'name="username"' in page.content
    response = client.post(
        reverse("login"), {"username": "alice", "password": "pw-alice", "next": "/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_a_wrong_password_says_so(client: Client, make_user):
    make_user("alice")
    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert b"do not match" in response.content


def test_sign_out_is_a_post_and_returns_to_login(client: Client, make_user):
    client.force_login(make_user("alice"))
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    assert client.get("/").status_code == 302


def test_page_carries_poll_interval_user_and_warehouses(
    client: Client, make_user, warehouse, settings
):
    settings.UI_POLL_INTERVAL_SECONDS = 3
    user = make_user("alice")
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    config = page_config(response)
    assert config["pollIntervalSeconds"] == 3
    assert config["user"] == {"id": user.pk, "username": "alice"}
    assert config["warehouses"] == [
        {"id": warehouse.pk, "code": "SH01", "name": "Shanghai 1", "subscribed": False}
    ]
    assert config["api"]["notifications"] == "/api/v1/notifications/"
    # The translations the scripts use come from Django's JavaScript catalog.
    assert reverse("javascript-catalog").encode() in response.content


def test_user_text_in_the_config_is_escaped(client: Client, make_user):
    Warehouse.objects.create(code="EVIL", name="</script><script>alert(1)</script>")
    client.force_login(make_user("alice"))
    response = client.get("/")
    assert b"</script><script>alert(1)" not in response.content
    assert page_config(response)["warehouses"][0]["name"] == "</script><script>alert(1)</script>"


def test_warehouses_with_subscriptions_come_first_and_inactive_are_left_out(
    make_user, role, rep_notice
):
    a = Warehouse.objects.create(code="A01", name="A")
    b = Warehouse.objects.create(code="B02", name="B")
    Warehouse.objects.create(code="C03", name="C", is_active=False)
    user = make_user("alice", role)
    Subscription.objects.create(message_type=rep_notice, warehouse=b, role=role)
    choices = warehouse_choices_for(user=user)
    assert [(c.code, c.subscribed) for c in choices] == [("B02", True), ("A01", False)]
    assert choices[1].id == a.pk


def test_page_without_any_warehouse_explains_what_to_do(client: Client, make_user):
    client.force_login(make_user("alice"))
    response = client.get("/")
    assert response.status_code == 200
    assert b"No active warehouse is set up" in response.content


def test_page_speaks_chinese_after_switching_language(client: Client, make_user, warehouse):
    client.force_login(make_user("alice"))
    response = client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    assert response.status_code == 302
    page = client.get("/").content.decode()
    assert '<html lang="zh-hans">' in page
    assert "全部标为已读" in page
    catalog = client.get(reverse("javascript-catalog")).content.decode()
    assert "\\u521a\\u521a" in catalog or "刚刚" in catalog  # "just now"


def test_login_page_follows_the_browser_language(client: Client):
    response = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert "登录" in response.content.decode()


def _po_entries(path: Path) -> dict[tuple[str | None, str], str]:
    """(context, msgid) -> msgstr (the first form of a plural) of a .po file, obsolete
    entries left out."""
    entries: dict[tuple[str | None, str], str] = {}
    for entry in polib.pofile(str(path)):
        if entry.obsolete:
            continue
        text = entry.msgstr or entry.msgstr_plural.get(0, "")
        entries[(entry.msgctxt, entry.msgid)] = text
    return entries


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_compiled_translations_match_their_sources(domain: str):
    # A fresh machine has no gettext to compile .po files, so the .mo files are committed;
    # this catches a .po edited without running `manage.py compilemessages` afterwards.
    folder = LOCALE / "zh_Hans" / "LC_MESSAGES"
    entries = _po_entries(folder / f"{domain}.po")
    assert entries, "the catalog is not empty"
    with (folder / f"{domain}.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for (context, msgid), msgstr in entries.items():
        assert msgstr, f"untranslated: {msgid!r}"
        found = compiled.gettext(msgid) if context is None else compiled.pgettext(context, msgid)
        assert found == msgstr, f"{domain}.mo is stale for {msgid!r}"


def test_scripts_never_parse_html():
    # User text (titles, bodies, chat messages) must only ever reach the DOM as text.
    forbidden = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(")
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(STATIC_JS.glob("*.js"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if forbidden.search(line)
    ]
    assert offenders == []


def test_templates_have_no_inline_event_handlers():
    templates = Path(settings.BASE_DIR) / "templates"
    pattern = re.compile(r"\son[a-z]+\s*=", re.I)
    offenders = [str(p) for p in templates.rglob("*.html") if pattern.search(p.read_text())]
    assert offenders == []
