"""A successful sign-in clears the failures of that user name only.

django-axes' own AXES_RESET_ON_SUCCESS deletes every attempt matching any lockout parameter of
the successful request, the address's too: an attacker spraying passwords over many user names
from one address would sign in to their own account every few tries and never be locked out
(issue 20, row 1e). So that setting is off and this receiver forgets only the signed-in name's
failures; the other names' failures from the address keep counting against it.
"""

from __future__ import annotations

from typing import Any

from axes.models import AccessAttempt
from django.contrib.auth.signals import user_logged_in


def _forget_own_failures(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    AccessAttempt.objects.filter(username=user.get_username()).delete()


def connect() -> None:
    user_logged_in.connect(_forget_own_failures, dispatch_uid="web-forget-own-login-failures")
