"""URLs nothing answers: JSON under /api/ (clients there parse JSON), HTML pages elsewhere."""

import pytest


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404(client):
    response = client.get("/api/v1/no-such-thing/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": "Not found."}


@pytest.mark.django_db
def test_a_malformed_notification_id_is_a_json_404(client_for, alice, warehouse):
    response = client_for(alice).post(
        "/api/v1/notifications/null,null/claim/", {"warehouse": warehouse.pk}, format="json"
    )
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.django_db
def test_pages_outside_the_api_keep_html_404s(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
