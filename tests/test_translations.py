"""Every word the product shows is in Simplified Chinese too (SPEC 5, issue 39 row F).

Three nets, each catching what the others cannot:
- the catalogs: makemessages, run on a copy of the product's source, finds no msgid that the
  committed .po leaves empty or fuzzy, and the committed .mo files hold what the .po files say;
- the admin's own strings (models' and fields' names, help texts, choices, actions, columns,
  fieldsets, filters, app names) are marked for translation and read differently in zh, so a
  plain string that makemessages cannot see fails here;
- the pages the issue named (the Notice and AlertAction forms, the new-secret action) say it
  in Chinese to a zh reader.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polib
import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from django.utils import translation
from django.utils.functional import Promise

from actions.models import AlertAction

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
# What makemessages scans: the product's packages and templates (not tests, benchmarks, docs,
# the virtualenv or built files).
SOURCE_IGNORED = shutil.ignore_patterns(
    ".*", "__pycache__", "*.pyc", "*.egg-info", "tests", "benchmarks", "docs", "site", "var",
    "staticfiles", "test-artifacts", "deploy", "node_modules",
)  # fmt: skip
PRODUCT_PACKAGES = {
    "config", "directory", "subscriptions", "notifications", "messaging", "outbox", "shifts",
    "push", "actions", "notices", "web", "stream", "inventory", "demo",
}  # fmt: skip
# Words that are the same in both languages.
SAME_IN_ZH = {"ID"}


def _gettext_tools() -> None:
    if shutil.which("xgettext") is None or shutil.which("msgfmt") is None:
        pytest.fail("GNU gettext is needed to check the catalogs: apt-get install gettext")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the product's source with the committed catalogs, after makemessages merged
    into them every msgid the source defines now (new ones empty, changed ones fuzzy)."""
    _gettext_tools()
    copy = tmp_path_factory.mktemp("source") / "wms"
    shutil.copytree(ROOT, copy, ignore=SOURCE_IGNORED)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "makemessages-in-a-copy-of-the-source",
        "PYTHONPATH": str(copy),
    }
    for domain in ("django", "djangojs"):
        subprocess.run(
            [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "-d", domain],
            cwd=copy,
            env=env,
            check=True,
            capture_output=True,
        )
    return copy / "locale" / "zh_Hans" / "LC_MESSAGES"


def _entries(path: Path) -> Iterator[polib.POEntry]:
    return (entry for entry in polib.pofile(str(path)) if not entry.obsolete)


def _where(entry: polib.POEntry) -> str:
    return f"{entry.msgid!r} ({', '.join(f'{f}:{n}' for f, n in entry.occurrences[:2])})"


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_every_msgid_of_the_product_has_a_chinese_translation(extracted: Path, domain: str):
    merged = extracted / f"{domain}.po"
    untranslated = [_where(e) for e in _entries(merged) if not e.translated() or e.fuzzy]
    assert not untranslated, (
        f"{len(untranslated)} msgids of the product have no Chinese translation in "
        f"locale/zh_Hans/LC_MESSAGES/{domain}.po (run `make messages`, translate, compile): "
        + "; ".join(untranslated)
    )
    # The catalog holds nothing beyond what makemessages gives it (no stale copy).
    committed = {e.msgid for e in _entries(CATALOGS / f"{domain}.po")}
    assert committed == {e.msgid for e in _entries(merged)}, "run `make messages`"


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_the_committed_mo_is_the_compiled_po(domain: str, tmp_path: Path):
    _gettext_tools()
    po = CATALOGS / f"{domain}.po"
    # msgfmt --check: the header, and every python-format msgstr has the msgid's placeholders.
    checked = subprocess.run(
        [shutil.which("msgfmt") or "msgfmt", "--check", "-o", str(tmp_path / "x.mo"), str(po)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr

    def catalog(entries: Any) -> dict[tuple[str, str], Any]:
        return {
            (e.msgid, e.msgid_plural): e.msgstr_plural or e.msgstr
            for e in entries
            if e.msgid
            and not e.obsolete
            and "fuzzy" not in e.flags
            and (e.msgstr or any(e.msgstr_plural.values()))
        }

    compiled = catalog(polib.mofile(str(CATALOGS / f"{domain}.mo")))
    written = {
        key: ({int(k): v for k, v in value.items()} if isinstance(value, dict) else value)
        for key, value in catalog(polib.pofile(str(po))).items()
    }
    assert compiled == written, f"compile {domain}.po again (make messages)"


def _admin_strings() -> Iterator[tuple[str, Any]]:
    """(where, text) for each string the admin shows of the product's models."""
    for config in apps.get_app_configs():
        if config.name in PRODUCT_PACKAGES:
            yield f"app {config.name}", config.verbose_name
    for model, model_admin in admin.site._registry.items():
        if model.__module__.split(".")[0] not in PRODUCT_PACKAGES:
            continue
        name = model.__name__
        yield f"{name} Meta.verbose_name", model._meta.original_attrs.get("verbose_name")
        yield (
            f"{name} Meta.verbose_name_plural",
            model._meta.original_attrs.get("verbose_name_plural"),
        )
        for field in [*model._meta.fields, *model._meta.many_to_many]:
            if field.auto_created:
                continue
            yield f"{name}.{field.name} verbose_name", field.verbose_name
            if field.help_text:
                yield f"{name}.{field.name} help_text", field.help_text
            for _value, label in getattr(field, "choices", None) or ():
                yield f"{name}.{field.name} choice", label
        for action in model_admin.actions or ():
            function = getattr(model_admin, action) if isinstance(action, str) else action
            yield f"{name} action {action}", getattr(function, "short_description", None)
        shown = [*model_admin.list_display, *model_admin.readonly_fields]
        for column in shown:
            function = getattr(model_admin, column, None) if isinstance(column, str) else column
            if function is not None and hasattr(function, "short_description"):
                yield f"{name} column {column}", function.short_description
        for title, _options in model_admin.fieldsets or ():
            if title is not None:
                yield f"{name} fieldset", title
        for list_filter in model_admin.list_filter:
            if isinstance(list_filter, type) and hasattr(list_filter, "title"):
                yield f"{name} filter {list_filter.__name__}", list_filter.title
        for inline in model_admin.inlines:
            if "verbose_name_plural" in vars(inline):
                yield f"{name} inline {inline.__name__}", inline.verbose_name_plural


def test_the_admins_strings_are_marked_and_read_differently_in_chinese():
    unmarked, untranslated = [], []
    for where, text in _admin_strings():
        if not isinstance(text, Promise):
            unmarked.append(f"{where}: {text!r}")
            continue
        with translation.override("en"):
            english = str(text)
        with translation.override("zh-hans"):
            chinese = str(text)
        if chinese == english and english not in SAME_IN_ZH:
            untranslated.append(f"{where}: {english!r}")
    assert not unmarked, "not marked with gettext_lazy: " + "; ".join(unmarked)
    assert not untranslated, "not translated in zh_Hans: " + "; ".join(untranslated)


@pytest.fixture
def staff_zh(db) -> Client:
    user = User.objects.create_superuser("lead", "lead@example.com", "pw")
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(user)
    return client


def test_the_alert_action_form_and_its_action_in_chinese(staff_zh: Client, rep_notice):
    page = staff_zh.get("/admin/actions/alertaction/add/").content.decode()
    for label in ("消息类型", "按钮文字", "中文按钮文字", "Webhook 地址", "扫描确认字段"):
        assert label in page, label
    assert "(e.g. bin)" not in page
    assert "webhook URL" not in page
    AlertAction.objects.create(
        message_type=rep_notice, code="task", label="Task made", url="https://wms.example/hook"
    )
    listing = staff_zh.get("/admin/actions/alertaction/").content.decode()
    assert "生成新密钥" in listing
    assert "Generate a new secret" not in listing


def test_the_notice_form_in_chinese(staff_zh: Client, warehouse):
    page = staff_zh.get("/admin/notices/notice/add/").content.decode()
    labels = set(re.findall(r"<label[^>]*>([^<]*?):?</label>", page))
    for label in ("仓库", "标题", "正文", "严重程度", "须确认已读", "截止时间", "升级角色"):
        assert label in labels, label
    for english in ("Title", "Body", "Requires ack", "Due at", "Escalation role"):
        assert english not in labels, english
