"""The OpenAPI schema declares each answer of a press as it is given (SPEC 14, "Outcomes on the
page"): a 409 is either `{"detail", "claimed_by"}` (someone else has it, or it is resolved) or
`{"detail", "field"}` (the scan does not match); a run's `error`; every body the API answered
here validates against what the schema says for its status."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # drf-spectacular's
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from outbox import services as outbox

PRESS = "/api/v1/notifications/{notification_id}/actions/{code}/"
RUNS = "/api/v1/notifications/{notification_id}/actions/"


@pytest.fixture
def schema(client_for, alice) -> dict:
    answer = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    return answer.json()


def validator(schema: dict, path: str, method: str, status: int) -> Draft202012Validator:
    """The JSON Schema of one documented answer, its $refs resolved in the whole document."""
    response = schema["paths"][path][method]["responses"][str(status)]
    body = response["content"]["application/json"]["schema"]
    registry = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(schema))
    if "$ref" in body:
        body = {"$ref": "urn:openapi" + body["$ref"]}
    return Draft202012Validator(body, registry=registry)


def nullable_as_json_schema(node):
    """OpenAPI 3.0's `nullable: true` as JSON Schema's type union (recursively)."""
    if isinstance(node, list):
        return [nullable_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: nullable_as_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        return {"anyOf": [{key: value for key, value in node.items()}, {"type": "null"}]}
    return node


@pytest.mark.django_db
def test_a_press_declares_both_of_its_conflicts(schema):
    declared = schema["paths"][PRESS]["post"]["responses"]["409"]
    body = declared["content"]["application/json"]["schema"]
    components = schema["components"]["schemas"]
    if "$ref" in body:
        body = components[body["$ref"].rsplit("/", 1)[1]]
    shapes = [components[ref["$ref"].rsplit("/", 1)[1]] for ref in body["oneOf"]]

    required = sorted(sorted(shape["required"]) for shape in shapes)
    assert required == [["claimed_by", "detail"], ["detail", "field"]]


@pytest.mark.django_db
def test_each_answer_of_a_press_validates_against_the_schema(
    schema, replenishers, warehouse, make_action, send, press, client_for, receiver
):
    schema = nullable_as_json_schema(schema)
    rita, ralf = replenishers
    make_action(confirm_field="bin")
    first, second, bare = send(), send("Replenish B-02-01"), send("By hand", data={})
    receiver.answer((404, "{}"))

    answers = [
        (press(rita, first.id, "task-created", scan="A-01-04"), 409),  # field
        (press(rita, bare.id, "task-created", scan="x"), 409),  # field: nothing to scan
        (press(rita, first.id, "task-created", scan="A-01-03"), 202),
        (press(rita, first.id, "task-created", scan="A-01-03"), 200),
        (press(ralf, first.id, "task-created", scan="A-01-03"), 409),  # claimed_by
        (press(rita, second.id, "no-such"), 404),
    ]
    run = answers[2][0].json()["run"]
    assert outbox.deliver(run["id"]) == "failed"
    listed = client_for(rita).get(
        f"/api/v1/notifications/{first.id}/actions/", {"warehouse": warehouse.pk}
    )

    for answer, status in answers:
        assert answer.status_code == status, answer.content
        validator(schema, PRESS, "post", status).validate(answer.json())
    assert listed.json()["results"][0]["error"]["http_status"] == 404
    validator(schema, RUNS, "get", 200).validate(listed.json())
