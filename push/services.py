"""Writes of Web Push: storing browsers' subscriptions, and posting one alert to one of them."""

from __future__ import annotations

import email.utils
import hmac
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum

import requests
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

from config import errors, timestamps
from config.users import User
from subscriptions.models import Warehouse

from . import hosts, keys, metrics, payload
from .models import PushSubscription

logger = logging.getLogger(__name__)


# --- Subscriptions ------------------------------------------------------------------------------


class EndpointTaken(errors.Conflict):
    """The endpoint is another user's, and the request did not bring that browser's keys (409)."""

    default_code = "push_endpoint_taken"

    def __init__(self) -> None:
        super().__init__(
            _(
                "Another user subscribed this browser, with other keys: only that browser "
                "can move its subscription."
            )
        )


class SubscriptionNotFound(errors.NotFound):
    """The endpoint is another user's: only its owner may delete it (404)."""

    default_code = "push_subscription_not_found"

    def __init__(self) -> None:
        super().__init__(_("You have no push subscription with this endpoint."))


def subscription_save(
    *, user: User, endpoint: str, p256dh: str, auth: str, warehouses: Sequence[Warehouse]
) -> tuple[PushSubscription, bool]:
    """Store the browser's subscription for these warehouses (replacing the ones it had);
    True when it is new. The endpoint must pass the SSRF guard (EndpointRefused otherwise).

    An endpoint already stored for another user becomes this user's only when the request
    brings the keys stored with it (p256dh and auth, which only that browser has): a shared
    handheld belongs to whoever signed in and subscribed last, but knowing an endpoint's URL
    is not enough to take it (EndpointTaken). Beyond WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER, the
    user's least recently saved subscriptions are dropped.
    """
    hosts.check_endpoint(endpoint)
    stored = PushSubscription.objects.select_for_update()
    with transaction.atomic():
        subscription = stored.filter(endpoint=endpoint).first()
        created = subscription is None
        if subscription is None:
            try:
                with transaction.atomic():
                    subscription = PushSubscription.objects.create(
                        user=user, endpoint=endpoint, p256dh=p256dh, auth=auth
                    )
            except IntegrityError:  # stored by a concurrent request meanwhile
                subscription = stored.get(endpoint=endpoint)
                created = False
        if not created:
            if subscription.user_id != user.pk and not _same_browser(subscription, p256dh, auth):
                raise EndpointTaken()
            subscription.user = user
            subscription.p256dh = p256dh
            subscription.auth = auth
            subscription.failures = 0
            subscription.last_error = ""
            subscription.save()
        subscription.warehouses.set(warehouses)
        keep = settings.WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER
        stale = PushSubscription.objects.filter(user=user).order_by("-updated_at", "-pk")[keep:]
        PushSubscription.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()
    return subscription, created


def _same_browser(subscription: PushSubscription, p256dh: str, auth: str) -> bool:
    """Whether the keys are those stored with the subscription (base64url, padding ignored)."""
    return all(
        hmac.compare_digest(stored.rstrip("=").encode(), given.rstrip("=").encode())
        for stored, given in ((subscription.p256dh, p256dh), (subscription.auth, auth))
    )


def subscription_delete(*, user: User, endpoint: str) -> bool:
    """Forget the user's subscription of this endpoint; False when none is stored (which is
    no error: the browser may have been unsubscribed after a 410 already). Another user's
    subscription is left alone: SubscriptionNotFound."""
    deleted, _count = PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
    if not deleted and PushSubscription.objects.filter(endpoint=endpoint).exists():
        raise SubscriptionNotFound()
    return bool(deleted)


# --- Delivery -----------------------------------------------------------------------------------


class Outcome(StrEnum):
    SENT = "sent"
    GONE = "gone"
    RETRY = "retried"
    FAILED = "failed"
    SKIPPED = "skipped"
    OFF_SHIFT = "off_shift"  # not posted: the user is off shift (SPEC 13) and it is not critical
    # not posted: the read model says not to tell them loudly (SPEC 17: silenced, muted, read,
    # snoozed, or it came quietly to them)
    QUIET = "quiet"


@dataclass(frozen=True)
class Attempt:
    outcome: Outcome
    retry_after: float | None = None  # seconds the push service asked to wait
    error: str = ""


@dataclass(frozen=True)
class Posted:
    """What one post got from its push service (no database read or written to get it): an
    HTTP status (None: no answer), its Retry-After, and an error in words; or `skipped`."""

    status: int | None = None
    retry_after: str | None = None
    error: str = ""
    skipped: str = ""  # not posted, and why


def post(
    subscription: PushSubscription,
    alert: payload.Alert,
    *,
    private_key: str,
    session: requests.Session,
) -> Posted:
    """Post the alert, encrypted for the browser (RFC 8291 aes128gcm) and signed with the VAPID
    key (RFC 8292), to the subscription's push service. Touches no database: safe in a thread
    of its own (`send_all`)."""
    try:
        hosts.check_endpoint(subscription.endpoint)
    except hosts.EndpointRefused as exc:
        return Posted(skipped=f"endpoint refused: {exc}")
    ttl = alert.ttl_seconds(timestamps.now_ms())
    if ttl <= 0:
        return Posted(skipped="expired")
    try:
        webpush(
            subscription_info=subscription.as_webpush_info(),
            data=payload.encode(alert),  # bytes: pywebpush encrypts them as they are
            vapid_private_key=Vapid.from_raw(private_key.encode()),
            vapid_claims={"sub": settings.WEB_PUSH_SUBJECT},
            content_encoding="aes128gcm",
            ttl=ttl,
            headers={"Urgency": alert.urgency, "Topic": alert.topic},
            timeout=settings.WEB_PUSH_TIMEOUT_SECONDS,
            requests_session=session,
        )
    except WebPushException as exc:
        status = exc.status_code
        error = f"HTTP {status}" if status is not None else str(exc)[:200]
        return Posted(status=status, retry_after=exc.retry_after, error=error)
    except (requests.RequestException, OSError) as exc:
        return Posted(error=f"{type(exc).__name__}: {exc}"[:200])
    return Posted(status=201)


def record(subscription: PushSubscription, posted: Posted) -> Attempt:
    """Record what a post got, and what the caller may do next.

    Not retried here: RETRY says the caller may try again (no answer, 429, 5xx). GONE (404,
    410) deleted the subscription. The metric counts every outcome but RETRY, which the caller
    counts once it knows whether a retry follows.
    """
    if posted.skipped:
        return _skipped(posted.skipped)
    status = posted.status
    if status is not None and 200 <= status < 300:
        PushSubscription.objects.filter(pk=subscription.pk).update(
            last_success_at=timezone.now(), failures=0, last_error=""
        )
        metrics.PUSHES.labels(Outcome.SENT).inc()
        return Attempt(Outcome.SENT)
    if status in (404, 410):
        PushSubscription.objects.filter(pk=subscription.pk).delete()
        metrics.PUSHES.labels(Outcome.GONE).inc()
        logger.info("Push subscription %s is gone (%s): deleted", subscription.pk, status)
        return Attempt(Outcome.GONE)
    _record_failure(subscription, posted.error)
    if status is None or status == 429 or status >= 500:
        return Attempt(Outcome.RETRY, _retry_after(posted.retry_after), posted.error)
    metrics.PUSHES.labels(Outcome.FAILED).inc()
    return Attempt(Outcome.FAILED, error=posted.error)


def send(
    subscription: PushSubscription, alert: payload.Alert, *, session: requests.Session
) -> Attempt:
    """Post the alert to one subscription and record what happened (a retry)."""
    posted = post(subscription, alert, private_key=keys.current().private_key, session=session)
    return record(subscription, posted)


def send_all(
    subscriptions: Sequence[PushSubscription],
    alert: payload.Alert,
    *,
    session_factory: Callable[[], requests.Session],
) -> list[Attempt]:
    """Post the alert to every subscription at once, at most WEB_PUSH_CONCURRENCY at a time, so
    one slow push service delays no other browser; then record each outcome, in this thread
    (the posts touch no database). Each thread posts with a session of its own."""
    if not subscriptions:
        return []
    private_key = keys.current().private_key
    local = threading.local()

    def post_one(subscription: PushSubscription) -> Posted:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = session_factory()
        return post(subscription, alert, private_key=private_key, session=session)

    workers = max(1, min(settings.WEB_PUSH_CONCURRENCY, len(subscriptions)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="push") as pool:
        posted = list(pool.map(post_one, subscriptions))
    return [record(s, p) for s, p in zip(subscriptions, posted, strict=True)]


def _skipped(reason: str) -> Attempt:
    metrics.PUSHES.labels(Outcome.SKIPPED).inc()
    return Attempt(Outcome.SKIPPED, error=reason)


def _record_failure(subscription: PushSubscription, error: str) -> None:
    PushSubscription.objects.filter(pk=subscription.pk).update(
        failures=F("failures") + 1,
        total_failures=F("total_failures") + 1,
        last_failure_at=timezone.now(),
        last_error=error[:200],
    )


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_seconds(retries: int, retry_after: float | None = None) -> float:
    """How long to wait before retry number `retries + 1`: the first delay doubled each time,
    up to the longest, with up to a quarter of jitter (pushes that failed together do not all
    come back together), and never less than the push service's Retry-After."""
    first = settings.WEB_PUSH_RETRY_FIRST_SECONDS
    longest = settings.WEB_PUSH_RETRY_MAX_SECONDS
    delay = min(longest, first * 2**retries)
    delay *= 1 - random.random() / 4  # noqa: S311  (jitter, not security)
    return max(delay, min(retry_after or 0.0, longest))
