"""The operators' `publish` command."""

import pytest
from django.core.management import CommandError, call_command

from notifications.selectors import inbox_page

pytestmark = pytest.mark.django_db(transaction=True)


def test_publish_command_delivers_and_reports(warehouse, replenishers, capsys):
    call_command(
        "publish",
        "--type",
        "REP_NOTICE",
        "--warehouse",
        "SH01",
        "--title",
        "Replenish A-01-03",
        "--body",
        "Stock is -12",
        "--data",
        '{"bin": "A-01-03"}',
    )

    assert "to 1 inbox(es)" in capsys.readouterr().out
    (item,) = inbox_page(user=replenishers[0], warehouse_id=warehouse.pk).items
    assert (item.notification.title, item.notification.data) == (
        "Replenish A-01-03",
        {"bin": "A-01-03"},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--type", "NOPE"], "message_type: Unknown message type 'NOPE'."),
        (["--data", "{oops"], "--data is not valid JSON"),
    ],
)
def test_publish_command_errors_are_clear(warehouse, rep_notice, args, message):
    base = {"--type": "REP_NOTICE", "--warehouse": "SH01", "--title": "t"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))

    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        call_command("publish", *[x for pair in base.items() for x in pair])
