"""Web Push endpoints: the server's key, and a browser's subscription (SPEC section 12)."""

from __future__ import annotations

from django.middleware.csrf import get_token
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.users import signed_in
from config.validation import validated
from notifications.api.serializers import DetailOutput

from .. import keys, services
from . import serializers as s

NO_STORE = {"Cache-Control": "no-store"}


class KeyView(APIView):
    @extend_schema(
        responses=s.KeyOutput,
        summary="The VAPID public key browsers subscribe with",
    )
    def get(self, request: Request) -> Response:
        return Response({"public_key": keys.current().public_key})


class SubscriptionsView(APIView):
    @extend_schema(
        request=s.SubscriptionInput,
        responses={200: s.SubscriptionOutput, 201: s.SubscriptionOutput, 409: DetailOutput},
        summary="Store this browser's push subscription for these warehouses",
        description="201 when new, 200 when the endpoint was stored already (its keys and "
        "warehouses are replaced). The endpoint must be `https://` on a host of "
        "WEB_PUSH_ALLOWED_HOSTS, else 400. An endpoint stored for another user becomes this "
        "user's only with the keys stored for it (the same browser), else 409.",
    )
    def post(self, request: Request) -> Response:
        data = validated(s.SubscriptionInput, request.data)
        subscription, created = services.subscription_save(
            user=signed_in(request),
            endpoint=data["endpoint"],
            p256dh=data["keys"]["p256dh"],
            auth=data["keys"]["auth"],
            warehouses=list({w.pk: w for w in data["warehouses"]}.values()),
        )
        return Response(
            s.SubscriptionOutput(subscription).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        request=s.EndpointInput,
        responses={204: None, 404: DetailOutput},
        summary="Forget this browser's push subscription",
        description="204 when it was this user's, or is stored for nobody; 404 (and nothing "
        "deleted) when it is another user's.",
    )
    def delete(self, request: Request) -> Response:
        payload = validated(s.EndpointInput, request.data)
        services.subscription_delete(user=signed_in(request), endpoint=payload["endpoint"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class CsrfView(APIView):
    @extend_schema(
        responses=s.CsrfOutput,
        summary="The CSRF token of this session (for the service worker)",
        description="A service worker cannot read cookies, so the Claim button of a push "
        "notification fetches the token here (same origin only: no CORS) and sends it in "
        "`X-CSRFToken`.",
    )
    def get(self, request: Request) -> Response:
        signed_in(request)
        return Response({"csrf_token": get_token(request)}, headers=NO_STORE)
