"""Web Push's settings (SPEC section 12), from the environment (config/app_settings.py)."""

from config.app_settings import env

# The VAPID key pair (base64url: the raw 32-byte private key, the 65-byte public point) and the
# contact the push services see (`mailto:` or `https:`). Without the keys, a pair is generated
# once and kept in the database (push.keys); `manage.py webpush_keys` prints a new pair.
WEB_PUSH_VAPID_PRIVATE_KEY = env("WEB_PUSH_VAPID_PRIVATE_KEY", default="")
WEB_PUSH_VAPID_PUBLIC_KEY = env("WEB_PUSH_VAPID_PUBLIC_KEY", default="")
WEB_PUSH_SUBJECT = env("WEB_PUSH_SUBJECT", default="mailto:webpush@example.com")
# The only hosts the server ever posts to: the push services of Chrome, Edge, Firefox, Safari
# and Opera. An entry is a host name (port 443), `host:port`, or `*.domain` for its subdomains.
WEB_PUSH_ALLOWED_HOSTS = env.list(
    "WEB_PUSH_ALLOWED_HOSTS",
    default=[
        "fcm.googleapis.com",
        "android.googleapis.com",
        "updates.push.services.mozilla.com",
        "push.services.mozilla.com",
        "web.push.apple.com",
        "*.push.apple.com",
        "*.notify.windows.com",
    ],
)
# Notifications of this severity or higher are pushed (escalations always are).
WEB_PUSH_MIN_SEVERITY = env("WEB_PUSH_MIN_SEVERITY", default="critical")
# The longest one push request may take, all of it: connect, TLS handshake, send, and the
# answer (a request whose status has not come by then counts as unanswered, and is retried).
WEB_PUSH_TIMEOUT_SECONDS = env.float("WEB_PUSH_TIMEOUT_SECONDS", default=10.0)
# An alert's posts go out at once, at most this many at a time (threads of the push worker),
# so one slow push service delays no other browser.
WEB_PUSH_CONCURRENCY = env.int("WEB_PUSH_CONCURRENCY", default=16)
# The most of a push service's answer body that is read; the rest is left unread (the status
# decides the outcome). Push services answer a few hundred bytes at most.
WEB_PUSH_MAX_RESPONSE_BYTES = env.int("WEB_PUSH_MAX_RESPONSE_BYTES", default=64 * 1024)
# A failed push (no answer, 429, 5xx) is retried this many times, waiting twice as long each
# time from the first delay up to the longest (with jitter, and at least a Retry-After).
WEB_PUSH_MAX_RETRIES = env.int("WEB_PUSH_MAX_RETRIES", default=5)
WEB_PUSH_RETRY_FIRST_SECONDS = env.float("WEB_PUSH_RETRY_FIRST_SECONDS", default=10.0)
WEB_PUSH_RETRY_MAX_SECONDS = env.float("WEB_PUSH_RETRY_MAX_SECONDS", default=600.0)
# A user's browsers beyond this many: the oldest subscription makes room for the new one.
WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER = env.int("WEB_PUSH_MAX_SUBSCRIPTIONS_PER_USER", default=10)
