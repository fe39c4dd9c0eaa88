"""Project-wide checks that CI relies on."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_migrations_match_the_models():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_django_system_checks_pass():
    call_command("check", fail_level="WARNING")


def test_the_openapi_schema_is_valid_and_complete(tmp_path):
    # Warnings mean an endpoint whose request or response shape the schema does not know.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "s.yml"))
