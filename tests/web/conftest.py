"""Browser-test fixtures: Debian's Chromium driven by Playwright against the live server.

Chromium comes from the system (`apt-get install chromium`), never from Playwright's own
download. Without it the browser tests skip, unless WMS_REQUIRE_BROWSER=1 (as `.ci/run` sets):
then a missing browser fails them, because in CI a skipped browser test is a failure.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from notifications.services import publish
from subscriptions.models import Warehouse
from tests.actions.conftest import receiver  # noqa: F401  (the WMS's webhook over HTTPS)
from tests.push.conftest import push_service  # noqa: F401  (the Web Push service stand-in)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

# Playwright's sync API keeps an event loop running in this thread; Django would then refuse
# the ORM calls the tests make between browser steps. Only this test package needs that.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(django_settings.BASE_DIR) / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    # The machine's network is closed: without these Chromium stalls on refused connections.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_executable() -> str | None:
    configured = os.environ.get("WMS_CHROMIUM")
    if configured:
        return configured
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _unavailable(reason: str) -> None:
    if os.environ.get("WMS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (WMS_REQUIRE_BROWSER=1: browser tests must run here)", pytrace=False)
    pytest.skip(f"{reason}: browser tests skipped")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Run the browser tests last: once Playwright is running, its event loop stays up for the
    # rest of the process, and tests elsewhere should not run beside it.
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    if executable is None:
        _unavailable("Chromium not found: install Debian's `chromium` (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed: pip install -e '.[dev]'")
    from playwright.sync_api import expect

    # Assertions wait for their condition as long as actions do (10 s, not Playwright's 5 s):
    # a loaded CI machine can take longer than 5 s for a poll to come round; a condition that
    # holds still passes at once.
    expect.set_options(timeout=10_000)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture(autouse=True)
def _fast_ui(request: pytest.FixtureRequest) -> None:
    """Browser tests poll every half second and back off to at most two seconds."""
    if request.node.get_closest_marker("browser") is None:
        return
    settings = request.getfixturevalue("settings")
    settings.UI_POLL_INTERVAL_SECONDS = 0.5
    settings.UI_POLL_MAX_BACKOFF_SECONDS = 2
    settings.REDIS_RETRY_AFTER_SECONDS = 1


@pytest.fixture
def opens_on_sh01(settings: Any) -> None:
    """The page opens on warehouse SH01 (UI_DEFAULT_WAREHOUSE)."""
    settings.UI_DEFAULT_WAREHOUSE = "SH01"


def notify(warehouse: Warehouse, title: str, **kwargs: Any) -> str:
    """Publish a REP_NOTICE that reaches somebody; its id."""
    result = publish(message_type="REP_NOTICE", warehouse=warehouse, title=title, **kwargs)
    assert result.recipients >= 1
    return result.id


def assert_tappable(
    box: dict[str, float] | None, what: str, *, screen: float = 360, narrowest: float = 0
) -> None:
    """`box` (a bounding box) is on a screen `screen` px wide sideways and at least 44 px high
    (a gloved thumb), and at least `narrowest` px wide."""
    assert box is not None, f"{what} is not displayed"
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= screen + 0.5, f"{what} ends right of the screen: {box}"
    assert box["height"] >= 44, f"{what} is too low: {box}"
    assert box["width"] >= narrowest, f"{what} is too narrow: {box}"


def wait_until(page: Page, condition: Callable[[], bool], timeout_ms: int = 10_000) -> None:
    """Let the browser run (and Playwright deliver its events) until `condition()` holds."""
    waited = 0
    while not condition():
        assert waited < timeout_ms, "the condition did not come true in time"
        page.wait_for_timeout(50)
        waited += 50


@dataclass
class Screen:
    """A signed-in browser page, and the JavaScript errors it raised."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def _screens(browser: Browser, base_url: str) -> tuple[Callable[..., Screen], Callable[[], None]]:
    """open_(user, ...) -> a Screen on `base_url`, and close() that ends them all and fails on
    the JavaScript errors they raised."""
    contexts = []
    screens: list[Screen] = []

    def open_(
        user: User | None,
        *,
        path: str = "/",
        locale: str = "en-US",
        size: tuple[int, int] = (1280, 800),
        mobile: bool = False,
    ) -> Screen:
        context = browser.new_context(
            viewport={"width": size[0], "height": size[1]},
            locale=locale,
            is_mobile=mobile,
            has_touch=mobile,
            device_scale_factor=2 if mobile else 1,
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
            context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base_url}])
        page = context.new_page()
        screen = Screen(page)
        page.on("pageerror", lambda error: screen.errors.append(str(error)))
        screens.append(screen)
        page.goto(base_url + path)
        return screen

    def close() -> None:
        for context in contexts:
            context.close()
        errors = [error for screen in screens for error in screen.errors]
        assert errors == [], f"JavaScript errors on the page: {errors}"

    return open_, close


@pytest.fixture
def open_screen(browser: Browser, live_server: Any) -> Iterator[Callable[..., Screen]]:
    """open_screen(user) -> a fresh browser context signed in as `user`, on the warehouse page.

    `size=(360, 640), mobile=True` emulates a handheld: a touch screen (tap, not click) and a
    mobile viewport."""
    open_, close = _screens(browser, live_server.url)
    with _one_request_at_a_time(live_server):
        yield open_
        close()


@contextmanager
def _one_request_at_a_time(live_server: Any) -> Iterator[None]:
    """On SQLite the live server's request threads share the test's one connection (Django's
    LiveServerThread), which Python's sqlite3 does not survive being used by two threads at
    once (a segmentation fault seen under load): the application answers one request at a
    time (connections stay concurrent; a response's body is sent outside the lock)."""
    if connection.vendor != "sqlite":
        yield
        return
    httpd = live_server.thread.httpd
    application = httpd.get_app()
    lock = threading.Lock()

    def one_at_a_time(environ: Any, start_response: Any) -> Any:
        with lock:
            return application(environ, start_response)

    httpd.set_app(one_at_a_time)
    try:
        yield
    finally:
        httpd.set_app(application)


@pytest.fixture
def open_live_screen(
    browser: Browser, asgi_server: str, settings: Any, transactional_db: None
) -> Iterator[Callable[..., Screen]]:
    """open_screen's twin on the ASGI server, where the event stream runs ("Live"). Polls are
    30 s apart: what arrives sooner came by the stream."""
    settings.UI_POLL_INTERVAL_SECONDS = 30
    open_, close = _screens(browser, asgi_server)
    yield open_
    close()
