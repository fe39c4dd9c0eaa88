"""An alert action added, relabelled or switched off in another process (the admin's worker,
`manage.py shell`) is seen at this process's next request, although this process already holds
the catalog (issue 38, row A: the receiver that should have replaced the directory's version
was dropped by a weak reference, so a new action answered 404 for minutes)."""

from __future__ import annotations

import pytest

from tests import another_process
from tests.actions.test_api import item

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_new_action_is_offered_and_pressable(
    replenishers, warehouse, make_action, send, client_for, press, receiver, tmp_path
):
    rita, _ = replenishers
    make_action("task-created")
    sent = send()
    client = client_for(rita)
    assert [a["code"] for a in item(client, warehouse, sent.id)["actions"]] == ["task-created"]

    another_process.run(
        f"""
        from actions.models import AlertAction
        from subscriptions.models import MessageType
        AlertAction.objects.create(
            message_type=MessageType.objects.get(code="REP_NOTICE"), code="counted",
            label="Bin counted", url={receiver.url()!r},
        )
        """,
        tmp_path,
    )

    codes = [a["code"] for a in item(client, warehouse, sent.id)["actions"]]
    assert codes == ["task-created", "counted"]
    assert press(rita, sent.id, "counted").status_code == 202


def test_a_relabelled_action_shows_its_new_label(
    replenishers, warehouse, make_action, send, client_for, tmp_path
):
    rita, _ = replenishers
    make_action("task-created")
    sent = send()
    client = client_for(rita)
    assert item(client, warehouse, sent.id)["actions"][0]["label"] == "Replenishment task created"

    another_process.run(
        """
        from actions.models import AlertAction
        action = AlertAction.objects.get(code="task-created")
        action.label = "Task made"
        action.save()
        """,
        tmp_path,
    )

    assert item(client, warehouse, sent.id)["actions"][0]["label"] == "Task made"


def test_a_deactivated_action_is_no_longer_offered_nor_pressable(
    replenishers, warehouse, make_action, send, client_for, press, tmp_path
):
    rita, _ = replenishers
    make_action("task-created")
    sent = send()
    client = client_for(rita)
    assert item(client, warehouse, sent.id)["actions"] != []

    another_process.run(
        """
        from actions.models import AlertAction
        action = AlertAction.objects.get(code="task-created")
        action.is_active = False
        action.save()
        """,
        tmp_path,
    )

    assert item(client, warehouse, sent.id)["actions"] == []
    assert press(rita, sent.id, "task-created").status_code == 404
