"""The Web Push API (SPEC 12): the server's key, browsers' subscriptions, and the SSRF guard."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from push import checks, keys
from push.models import PushSubscription, VapidKeyPair
from subscriptions.models import Warehouse
from tests.push.conftest import Browser

KEY_URL = "/api/v1/push/key/"
SUBSCRIPTIONS_URL = "/api/v1/push/subscriptions/"
FCM = "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bH"


@pytest.fixture
def alice_api(client_for, alice):
    return client_for(alice)


def post(api, body):
    return api.post(SUBSCRIPTIONS_URL, body, format="json")


# --- The key ----------------------------------------------------------------------------------


def test_without_configuration_a_key_pair_is_made_once_and_kept(alice_api, client_for, bob):
    first = alice_api.get(KEY_URL)
    second = client_for(bob).get(KEY_URL)

    assert first.status_code == 200
    public = first.json()["public_key"]
    assert second.json() == {"public_key": public}
    raw = keys.b64url_decode(public)
    assert len(raw) == 65
    assert raw[0] == 4
    row = VapidKeyPair.objects.get()
    assert keys.from_private(row.private_key).public_key == public


def test_a_configured_key_pair_is_used_and_none_is_stored(alice_api, settings):
    pair = keys.generate()
    settings.WEB_PUSH_VAPID_PRIVATE_KEY = pair.private_key
    settings.WEB_PUSH_VAPID_PUBLIC_KEY = pair.public_key

    assert alice_api.get(KEY_URL).json() == {"public_key": pair.public_key}
    assert not VapidKeyPair.objects.exists()


def test_the_key_needs_a_signed_in_user(api_client):
    assert api_client.get(KEY_URL).status_code in (401, 403)


def test_webpush_keys_prints_a_new_valid_pair(capsys):
    call_command("webpush_keys")
    call_command("webpush_keys")

    lines = capsys.readouterr().out.split()
    values = dict(line.split("=", 1) for line in lines)
    assert set(values) == {"WEB_PUSH_VAPID_PRIVATE_KEY", "WEB_PUSH_VAPID_PUBLIC_KEY"}
    assert (
        keys.from_private(values["WEB_PUSH_VAPID_PRIVATE_KEY"]).public_key
        == (values["WEB_PUSH_VAPID_PUBLIC_KEY"])
    )
    assert len({line for line in lines}) == 4  # two different pairs


@pytest.mark.parametrize(
    ("private", "public"),
    [
        ("not base64!", ""),
        (keys.b64url(b"\x01" * 31), ""),  # too short
        (keys.b64url(b"\xff" * 32), ""),  # beyond the curve's order
        ("", keys.generate().public_key),  # a public key alone
        (keys.generate().private_key, keys.generate().public_key),  # not a pair
    ],
    ids=["not-base64", "too-short", "beyond-the-order", "public-alone", "not-a-pair"],
)
def test_a_wrong_configured_key_stops_start_up(settings, private, public):
    settings.WEB_PUSH_VAPID_PRIVATE_KEY = private
    settings.WEB_PUSH_VAPID_PUBLIC_KEY = public

    assert [m.id for m in checks.web_push_settings(None)] == ["push.E001"]


def test_a_wrong_subject_or_allowed_host_stops_start_up(settings):
    settings.WEB_PUSH_SUBJECT = "admin@example.com"
    settings.WEB_PUSH_ALLOWED_HOSTS = ["fcm.googleapis.com", "https://evil.example/path"]

    assert [m.id for m in checks.web_push_settings(None)] == ["push.E002", "push.E003"]


def test_the_default_settings_pass_the_checks():
    assert checks.web_push_settings(None) == []


# --- Subscribing ------------------------------------------------------------------------------


def test_subscribing_is_201_then_200_and_replaces_the_warehouses(
    alice_api, alice, warehouse, other_warehouse
):
    browser = Browser(FCM)

    created = post(alice_api, browser.subscription_json(warehouse))
    again = post(alice_api, browser.subscription_json(other_warehouse, warehouse))

    assert created.status_code == 201
    assert created.json()["endpoint"] == FCM
    assert created.json()["warehouses"] == [warehouse.pk]
    assert again.status_code == 200
    assert sorted(again.json()["warehouses"]) == sorted([warehouse.pk, other_warehouse.pk])
    row = PushSubscription.objects.get()
    assert (row.user, row.p256dh, row.auth) == (alice, browser.keys["p256dh"], browser.keys["auth"])
    assert set(row.warehouses.all()) == {warehouse, other_warehouse}


def test_a_browser_subscribed_by_another_user_becomes_theirs(alice_api, client_for, bob, warehouse):
    """The same browser (a shared handheld) sends the keys it was subscribed with."""
    browser = Browser(FCM)
    post(alice_api, browser.subscription_json(warehouse))

    taken = post(client_for(bob), browser.subscription_json(warehouse))

    assert taken.status_code == 200
    assert PushSubscription.objects.get().user == bob  # alice's alerts no longer go there


@pytest.mark.parametrize(
    "keys_from",
    ["bobs_browser", "p256dh_only", "auth_only"],
    ids=["other-keys", "only-p256dh-matches", "only-auth-matches"],
)
def test_another_user_cannot_take_a_browser_by_its_endpoint_alone(
    alice_api, alice, client_for, bob, warehouse, other_warehouse, keys_from
):
    """Row K: bob knows alice's endpoint URL, not her browser's keys. He can neither delete her
    subscription nor store it as his; her browser keeps getting her alerts."""
    alices = Browser(FCM)
    post(alice_api, alices.subscription_json(warehouse))
    bobs = Browser(FCM).subscription_json(other_warehouse)  # her endpoint, his own keys
    if keys_from == "p256dh_only":
        bobs["keys"]["p256dh"] = alices.keys["p256dh"]
    elif keys_from == "auth_only":
        bobs["keys"]["auth"] = alices.keys["auth"]
    bob_api = client_for(bob)

    deleted = bob_api.delete(SUBSCRIPTIONS_URL, {"endpoint": FCM}, format="json")
    taken = post(bob_api, bobs)

    assert (deleted.status_code, taken.status_code) == (404, 409)
    assert "detail" in taken.json()
    row = PushSubscription.objects.get()
    assert (row.user, row.p256dh, row.auth) == (alice, alices.keys["p256dh"], alices.keys["auth"])
    assert list(row.warehouses.all()) == [warehouse]


def test_a_user_keeps_at_most_the_newest_subscriptions(alice_api, warehouse, settings):
    settings.WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER = 2
    for n in range(3):
        post(alice_api, Browser(f"{FCM}{n}").subscription_json(warehouse))

    assert sorted(PushSubscription.objects.values_list("endpoint", flat=True)) == [
        f"{FCM}1",
        f"{FCM}2",
    ]


def test_unsubscribing_is_204_and_touches_only_my_own(alice_api, client_for, bob, warehouse):
    mine, bobs = Browser(FCM), Browser(FCM + "bob")
    post(alice_api, mine.subscription_json(warehouse))
    post(client_for(bob), bobs.subscription_json(warehouse))

    gone = alice_api.delete(SUBSCRIPTIONS_URL, {"endpoint": FCM}, format="json")
    not_mine = alice_api.delete(SUBSCRIPTIONS_URL, {"endpoint": bobs.endpoint}, format="json")
    again = alice_api.delete(SUBSCRIPTIONS_URL, {"endpoint": FCM}, format="json")

    # Stored for nobody (already gone, e.g. after a 410): 204; another user's: 404.
    assert (gone.status_code, not_mine.status_code, again.status_code) == (204, 404, 204)
    assert list(PushSubscription.objects.values_list("endpoint", flat=True)) == [bobs.endpoint]


def test_subscribing_needs_a_signed_in_user(api_client, warehouse):
    response = post(api_client, Browser(FCM).subscription_json(warehouse))

    assert response.status_code in (401, 403)
    assert not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://fcm.googleapis.com/fcm/send/x",  # not https
        "https://evil.example.com/fcm/send/x",  # not a push service
        "https://fcm.googleapis.com.evil.example.com/x",  # a look-alike
        "https://evilfcm.googleapis.com/x",  # not a subdomain of an allowed one
        "https://user@fcm.googleapis.com/x",  # credentials, or a host in disguise
        "https://fcm.googleapis.com@169.254.169.254/x",
        "https://fcm.googleapis.com\\@169.254.169.254/x",  # a backslash some parsers read as /
        "https://fcm.googleapis.com:8443/x",  # another port on the allowed host
        "https://127.0.0.1/x",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/x",
        "https://localhost/x",
        "https://notify.windows.com/x",  # "*.notify.windows.com" allows subdomains only
        "https://fcm.googleapis.com/x#fragment",
        "https://fcm.googleapis.com/ x",
        "https://fcm.googleapis.com/\u00e9",
        "file:///etc/passwd",
        "fcm.googleapis.com/x",
        "https://fcm.googleapis.com/" + "x" * 1100,  # too long
        "",
    ],
)
def test_an_endpoint_off_the_allowed_push_services_is_refused(alice_api, warehouse, endpoint):
    response = post(alice_api, Browser(endpoint).subscription_json(warehouse))

    assert response.status_code == 400
    assert "endpoint" in response.json()
    assert not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://fcm.googleapis.com/fcm/send/abc:APA91b",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAAAB",
        "https://web.push.apple.com/QGuQyavXutnMH",
        "https://wns2-par02p.notify.windows.com/w/?token=BQYAAAD",
        "https://FCM.googleapis.com:443/fcm/send/abc",  # case and the default port
    ],
)
def test_the_major_browsers_push_services_are_allowed_by_default(alice_api, warehouse, endpoint):
    assert post(alice_api, Browser(endpoint).subscription_json(warehouse)).status_code == 201


def test_the_allowed_hosts_setting_replaces_the_defaults(alice_api, warehouse, settings):
    settings.WEB_PUSH_ALLOWED_HOSTS = ["push.example.net:8443", "*.push.example.org"]

    def status(endpoint: str) -> int:
        return post(alice_api, Browser(endpoint).subscription_json(warehouse)).status_code

    assert status("https://push.example.net:8443/a") == 201
    assert status("https://push.example.net/a") == 400  # port 443 is not listed
    assert status("https://eu.push.example.org/a") == 201
    assert status(FCM) == 400


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"keys": {"p256dh": "not base64!", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys"),
        ({"keys": {"p256dh": keys.b64url(b"\x04" + b"\x00" * 64), "auth": "x"}}, "keys"),
        ({"keys": {"p256dh": keys.b64url(b"\x04" * 33), "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys"),
        ({"keys": {"auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys"),
        ({"keys": "p256dh"}, "keys"),
        ({"warehouses": []}, "warehouses"),
        ({"warehouses": [999999]}, "warehouses"),
        ({"warehouses": ["SH01"]}, "warehouses"),
        ({"warehouses": list(range(1, 102))}, "warehouses"),
        ({"warehouses": 1}, "warehouses"),
        ({"endpoint": ["https://fcm.googleapis.com/x"]}, "endpoint"),
        ({"endpoint": None}, "endpoint"),
    ],
)
def test_bad_subscriptions_are_400_naming_the_field(alice_api, warehouse, change, field):
    body = {**Browser(FCM).subscription_json(warehouse), **change}

    response = post(alice_api, body)

    assert response.status_code == 400
    assert field in response.json()


def test_a_bad_auth_secret_length_is_refused(alice_api, warehouse):
    body = Browser(FCM).subscription_json(warehouse)
    body["keys"]["auth"] = keys.b64url(b"\x00" * 8)

    response = post(alice_api, body)

    assert response.status_code == 400
    assert "auth" in response.json()["keys"]


def test_an_inactive_warehouse_cannot_be_subscribed(alice_api, warehouse):
    Warehouse.objects.filter(pk=warehouse.pk).update(is_active=False)

    assert post(alice_api, Browser(FCM).subscription_json(warehouse)).status_code == 400


def test_a_deleted_user_takes_their_subscriptions_along(alice_api, alice, warehouse):
    post(alice_api, Browser(FCM).subscription_json(warehouse))

    User.objects.filter(pk=alice.pk).delete()

    assert not PushSubscription.objects.exists()


# --- CSRF for the service worker ----------------------------------------------------------------


def test_the_service_worker_claims_with_the_token_it_fetched(
    db, alice, warehouse, rep_notice, role
):
    """A service worker cannot read cookies: it fetches the token, then writes with it."""
    from notifications.services import publish
    from subscriptions.models import Subscription

    Subscription.objects.create(message_type=rep_notice, warehouse=warehouse, user=alice)
    note = publish(message_type=rep_notice, warehouse=warehouse, title="Stock-out")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    claim_url = f"/api/v1/notifications/{note.id}/claim/"
    body = {"warehouse": warehouse.pk}

    without = browser.post(claim_url, body, content_type="application/json")
    token = browser.get("/api/v1/push/csrf/")
    claimed = browser.post(
        claim_url,
        body,
        content_type="application/json",
        headers={"X-CSRFToken": token.json()["csrf_token"]},
    )

    assert without.status_code == 403
    assert token.status_code == 200
    assert token["Cache-Control"] == "no-store"
    assert claimed.status_code == 200
    assert claimed.json()["status"] == "claimed"


def test_the_csrf_token_needs_a_session(client):
    assert client.get("/api/v1/push/csrf/").status_code in (401, 403)


# --- Admin and the service worker script ------------------------------------------------------


def test_the_admin_lists_subscriptions_with_their_push_service(
    client, alice_api, warehouse, django_user_model
):
    post(alice_api, Browser(FCM).subscription_json(warehouse))
    staff = django_user_model.objects.create_superuser("root", password="pw-root")
    client.force_login(staff)

    listing = client.get("/admin/push/pushsubscription/")
    change = client.get(f"/admin/push/pushsubscription/{PushSubscription.objects.get().pk}/change/")

    assert listing.status_code == 200
    assert "fcm.googleapis.com" in listing.content.decode()
    assert "SH01" in listing.content.decode()
    assert change.status_code == 200
    assert client.get("/admin/push/pushsubscription/add/").status_code == 403


def test_the_service_worker_is_served_from_the_root_and_loads_the_push_handlers(client):
    response = client.get("/sw.js")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Cache-Control"] == "no-cache"
    assert 'importScripts("/static/web/js/sw-push.js")' in response.content.decode()
