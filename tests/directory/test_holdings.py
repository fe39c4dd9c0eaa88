"""Every change is seen at the next request (SPEC 10, turn 5), for every held model at once.

The cases are generated from the declarations (directory/holdings.py): each model some holding
is built from is changed in another process (a fresh interpreter with the product's settings,
as `manage.py shell` or a data import), by each kind of write the product or a person makes,
while this process (the running server) holds everything. Its next request must see a new
version of the directory and load again every holding built from that model. A held model
added later is covered without a new test.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission, User
from django.utils import timezone
from rest_framework.authtoken.models import Token

from actions.models import AlertAction
from config.bulk_writes import AnnouncingQuerySet
from directory import cache, holdings
from directory.snapshot import request_scope
from quiet.models import Silence
from shifts.models import Shift
from subscriptions.models import MessageType
from tests import another_process

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def _is_many_to_many(label: str) -> bool:
    return bool(apps.get_model(label)._meta.auto_created)


def _is_products(label: str) -> bool:
    """Whether the model belongs to one of the product's own apps (not Django's, not DRF's)."""
    path = Path(apps.get_app_config(label.split(".")[0]).path)
    return BASE_DIR in path.parents and ".venv" not in path.parts


def _changes() -> list[tuple[str, str]]:
    cases = []
    for label in sorted(holdings.watched_models()):
        if _is_many_to_many(label):
            kinds = ["add", "remove"]
        else:
            kinds = ["save", "delete"] + (["update"] if _is_products(label) else [])
        cases += [(label, kind) for kind in kinds]
    return cases


# Run in the other process: one write of `kind` to a row of the model `label`.
CHANGE = """
from django.apps import apps
from django.utils import timezone

label, kind = {label!r}, {kind!r}
model = apps.get_model(label)
if kind in ("add", "remove"):
    owner, field = next(
        (m, f)
        for m in apps.get_models()
        for f in m._meta.many_to_many
        if f.remote_field.through is model
    )
    # The first row with a link to remove (a row another test left behind may have none).
    rows = owner.objects.order_by("pk")
    if kind == "remove":
        rows = rows.filter(**{{field.name + "__isnull": False}}).distinct()
    source = rows.first()
    related = getattr(source, field.name)
    if kind == "add":
        related.add(field.related_model.objects.exclude(pk__in=related.all()).order_by("pk")[0])
    else:
        related.remove(related.order_by("pk")[0])
else:
    row = model.objects.order_by("pk").first()
    if kind == "save":
        row.save()
    elif kind == "delete":
        row.delete()
    else:
        field = next(f for f in model._meta.concrete_fields if not f.primary_key)
        model.objects.filter(pk=row.pk).update(**{{field.attname: getattr(row, field.attname)}})
print("changed", label, kind)
"""


@pytest.fixture
def world(db, warehouse, rep_notice, make_user):
    """A row of every held model, and the many-to-many links the changes add and remove."""
    role = Group.objects.create(name="Replenishment")
    other_role = Group.objects.create(name="Picking")
    nina = make_user("nina", role)
    permission = Permission.objects.order_by("pk")[0]
    nina.user_permissions.add(permission)
    role.permissions.add(permission)
    token = Token.objects.create(user=nina)
    Shift.objects.create(warehouse=warehouse, role=role, name="Early", starts="06:00", ends="14:00")
    AlertAction.objects.create(
        message_type=rep_notice, code="done", label="Done", url="https://wms.example/hook"
    )
    silence = Silence.objects.create(
        warehouse=warehouse,
        starts_at=timezone.now(),
        ends_at=timezone.now() + dt.timedelta(hours=1),
        reason="Stock count",
    )
    silence.message_types.add(rep_notice)
    MessageType.objects.create(code="OTHER", name="Other")  # one more to add to the silence
    return {"user": nina, "token": token, "roles": (role, other_role), "warehouse": warehouse}


def _hold_everything(world) -> str:
    """What a running server holds: every holding, and the directory's own entries."""
    with request_scope():
        for holding in holdings.declared():
            if holding.load is not None:
                holding.get()
        cache.token(world["token"].key)
        cache.user(world["user"].pk)
        cache.role_ids(world["user"])
        cache.warehouse(world["warehouse"].pk)
        cache.message_type("REP_NOTICE")
        _, version = cache.checked()
    return version


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("label", "kind"), _changes())
def test_a_change_in_another_process_is_seen_at_the_next_request(label, kind, world, tmp_path):
    held_at = _hold_everything(world)
    loads = {holding.name: holding.loads for holding in holdings.declared()}

    said = another_process.run(CHANGE.format(label=label, kind=kind), tmp_path)

    assert said.strip() == f"changed {label} {kind}"
    with request_scope():  # this process's next request
        _, version = cache.checked()
        assert version != held_at, f"{kind} of {label} elsewhere left the directory's version"
        for holding in holdings.declared():
            if holding.load is not None and label in holding.models:
                holding.get()
                assert holding.loads == loads[holding.name] + 1, holding.name


def test_every_case_is_generated():
    """The generated cases cover the models the requests read from held copies."""
    labels = {label for label, _ in _changes()}
    assert {
        "auth.User",
        "auth.User_groups",
        "auth.Group",
        "authtoken.Token",
        "subscriptions.Warehouse",
        "subscriptions.MessageType",
        "shifts.Shift",
        "actions.AlertAction",
        "quiet.Silence",
        "quiet.Silence_message_types",
    } <= labels


def test_the_products_watched_models_announce_their_bulk_writes():
    """A watched model of the product's own apps uses AnnouncingManager, so its
    `QuerySet.update()`, `bulk_create()` and `bulk_update()` are seen like saves."""
    for label in holdings.watched_models():
        if _is_products(label) and not _is_many_to_many(label):
            model = apps.get_model(label)
            assert issubclass(model._default_manager._queryset_class, AnnouncingQuerySet), label


@pytest.mark.django_db
def test_a_receiver_is_held_strongly():
    """A receiver dropped by a weak reference would let saves bump nothing (issue 38, row A)."""
    import gc

    gc.collect()
    with request_scope():
        _, before = cache.checked()
    User.objects.create(username="gc-survivor")
    with request_scope():
        _, after = cache.checked()
    assert after != before


@pytest.mark.django_db(transaction=True)
def test_a_subscription_made_in_another_process_reaches_the_next_publish(
    warehouse, rep_notice, make_user, client_for, tmp_path
):
    """Subscriptions are not held per process but mirrored into Redis (the publisher checks
    the set's token in its fan-out script): one made in another process is honoured by this
    process's next publish."""
    from notifications.services import publish

    nina = make_user("nina")
    first = publish(message_type=rep_notice, warehouse=warehouse, title="Before")
    assert first.recipients == 0  # nobody subscribes yet; this process now holds the set

    another_process.run(
        f"""
        from django.contrib.auth.models import User
        from subscriptions.models import Subscription
        Subscription.objects.create(
            message_type_id={rep_notice.pk}, warehouse_id={warehouse.pk},
            user=User.objects.get(username="nina"),
        )
        """,
        tmp_path,
    )

    second = publish(message_type=rep_notice, warehouse=warehouse, title="After")
    assert second.recipients == 1
    unread = client_for(nina).get("/api/v1/notifications/unread/", {"warehouse": warehouse.pk})
    assert unread.json()["unread_count"] == 1


@pytest.mark.django_db(transaction=True)
def test_a_notice_changed_in_another_process_is_read_at_the_next_request(
    warehouse, make_user, client_for, tmp_path
):
    """Notices are read from the database at each request (nothing per process): a body
    changed in another process is the next request's, as a new version (SPEC 15)."""
    from notices.models import Notice

    stella = make_user("stella", is_staff=True)
    notice = Notice.objects.create(
        warehouse=warehouse, title="Forklift lane B closed", body="Use lane C.", created_by=stella
    )
    client = client_for(stella)
    assert client.get(f"/api/v1/notices/{notice.pk}/").json()["version"] == 1

    another_process.run(
        f"""
        from notices.models import Notice
        notice = Notice.objects.get(pk={notice.pk})
        notice.body = "Use lane D."
        notice.save()
        """,
        tmp_path,
    )

    shown = client.get(f"/api/v1/notices/{notice.pk}/").json()
    assert (shown["version"], shown["body"]) == (2, "Use lane D.")
