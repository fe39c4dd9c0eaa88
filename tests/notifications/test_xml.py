"""The XML feed for legacy clients is well-formed whatever a notification's data holds."""

from __future__ import annotations

import io

import pytest
from defusedxml import ElementTree

from config.parsers import XMLParser
from config.renderers import XMLRenderer

pytestmark = pytest.mark.django_db(transaction=True)

AWKWARD = {
    "bin code": "A-01",
    "2nd": 1,
    "x><title>FORGED</title><y": "injected?",
    'quote"&amp': "<b>&</b>",
    "nested": {"a b": [1, {"c": "bell \x07 here"}], "ok": None},
    "bin": "A-01-03",
}


@pytest.fixture
def rita_client(replenishers, client_for):
    return client_for(replenishers[0])


def poll_xml(client, warehouse, path: str = "/api/v1/notifications/"):
    response = client.get(path, {"warehouse": warehouse.pk}, HTTP_ACCEPT="application/xml")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    return ElementTree.fromstring(response.content)


def items(element) -> dict:
    return {item.get("key"): item for item in element.findall("item")}


def test_data_keys_become_attributes_and_the_feed_parses(rita_client, warehouse, send):
    send(title="Replenish \x01 A-01", data=AWKWARD)

    root = poll_xml(rita_client, warehouse)

    (notification,) = root.find("results").findall("list-item")
    assert notification.findtext("title") == "Replenish \ufffd A-01"
    assert [t.text for t in root.iter("title")] == ["Replenish \ufffd A-01"]  # nothing forged
    data = items(notification.find("data"))
    assert set(data) == set(AWKWARD)
    assert data["bin code"].text == "A-01"
    assert data["2nd"].text == "1"
    assert data["x><title>FORGED</title><y"].text == "injected?"
    assert data['quote"&amp'].text == "<b>&</b>"
    nested = items(data["nested"])
    first, second = nested["a b"].findall("list-item")
    assert first.text == "1"
    assert items(second)["c"].text == "bell \ufffd here"
    assert nested["ok"].text is None


def test_the_unread_summary_parses_too(rita_client, warehouse, send):
    send(data={"bin code": "A-01"})

    root = poll_xml(rita_client, warehouse, "/api/v1/notifications/unread/")

    assert root.findtext("unread_count") == "1"
    (latest,) = root.find("latest").findall("list-item")
    assert items(latest.find("data"))["bin code"].text == "A-01"


def test_error_answers_in_xml_are_well_formed(rita_client, warehouse):
    response = rita_client.post(
        "/api/v1/notifications/read/",
        {"warehouse": warehouse.pk, "ids": ["not-a-uuid"]},
        format="json",
        HTTP_ACCEPT="application/xml",
    )

    assert response.status_code == 400
    root = ElementTree.fromstring(response.content)
    assert items(root.find("ids"))["0"] is not None


def test_plain_keys_outside_data_stay_elements():
    rendered = XMLRenderer().render({"unread_count": 2, "data": {"qty": -12}})

    root = ElementTree.fromstring(rendered)
    assert root.findtext("unread_count") == "2"
    assert items(root.find("data"))["qty"].text == "-12"


def test_what_the_renderer_writes_the_parser_reads_back():
    rendered = XMLRenderer().render({"warehouse": 3, "all": "true"})

    assert XMLParser().parse(io.BytesIO(rendered.encode()), None, {}) == {
        "warehouse": 3,
        "all": "true",
    }
