"""A schema-driven fuzz run: schemathesis against the app's own OpenAPI schema (SPEC section 10).

Every operation, as a normal user and as a publisher (token authentication), a fixed seed and a
bounded number of examples: no answer is a 500, and every answer conforms to the schema
(status code documented, content type, headers and body shape).
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.contrib.auth.models import Permission
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, seed, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from subscriptions.models import Subscription

pytestmark = pytest.mark.django_db

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Per operation and user. CI's bound keeps the run within seconds; a deeper run, e.g.
# WMS_FUZZ_EXAMPLES=300 (about five minutes), found nothing more when this was written.
EXAMPLES = int(os.environ.get("WMS_FUZZ_EXAMPLES", "20"))


def wsgi_app_inside_the_test_transaction():
    """Django's WSGI app, minus closing the database connection after each request (which
    would end the test's transaction), as Django's own test client does."""
    handler = get_wsgi_application()

    def app(environ, start_response):
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        try:
            response = handler(environ, start_response)
            body = b"".join(response)
            response.close()  # request_finished, as a WSGI server would send it
            return [body]
        finally:
            signals.request_started.connect(close_old_connections)
            signals.request_finished.connect(close_old_connections)

    return app


# Loaded through the app itself, as a client would: GET /api/schema/ (no database needed), as
# a site with API_DOCS_PUBLIC=1 serves it to anyone.
with override_settings(API_DOCS_PUBLIC=True):
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app_inside_the_test_transaction())


def token_headers(user, *, publisher: bool = False) -> dict[str, str]:
    if publisher:
        user.user_permissions.add(Permission.objects.get(codename="publish_notification"))
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}


@pytest.fixture
def operator(
    make_user, warehouse, rep_notice, role, alice, bob, django_capture_on_commit_callbacks
):
    """An operator whose role receives REP_NOTICE in SH01; alice and bob exist to chat with."""
    with django_capture_on_commit_callbacks(execute=True):  # mirrored into Redis
        Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, role=role)
    return make_user("operator", role)


def fuzzed(test):
    return schema.parametrize()(
        seed(20261121)(
            settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )(test)
        )
    )


@fuzzed
def test_every_operation_as_an_operator(case, operator):
    case.call_and_validate(headers=token_headers(operator), checks=CHECKS)


@fuzzed
def test_every_operation_as_a_publisher(case, operator):
    case.call_and_validate(headers=token_headers(operator, publisher=True), checks=CHECKS)
