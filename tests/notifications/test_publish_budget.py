"""Publishing retries in one loop with one budget: every reply of the publish script that wrote
nothing gets exactly one remedy (a fresh directory, the members the script sent back, a rebuild
of the warehouse's subscriber sets from the database), and a publish whose replies keep asking
ends in a 503 error after its budget, never in an endless or multiplied loop.

The replies are real ones: just before each call of the script, Redis is changed the way
another process (or an emptied Redis) would change it."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from django.utils import translation

from config.errors import ErrorKind
from config.redis import REDIS_UNAVAILABLE, as_text
from directory import cache as directory
from directory.keys import version_key
from directory.snapshot import DirectoryChanged
from notifications import keys, publishing, services, store
from notifications.readmodel import delivery
from subscriptions import keys as subscription_keys
from subscriptions import services as subscription_services
from tests.notifications.conftest import seen_by

pytestmark = pytest.mark.django_db(transaction=True)

Step = Callable[[], None]


class Interference:
    """What happens in Redis just before each call of the publish script: `steps[n]` before
    the n-th call (from 0), the last step again before every later call."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.calls = 0

    def start(self, *steps: Step) -> None:
        """From the next call on, these steps; `calls` counts from there."""
        self.steps, self.calls = list(steps), 0

    def before_call(self) -> None:
        if self.steps:
            self.steps[min(self.calls, len(self.steps) - 1)]()
        self.calls += 1


@pytest.fixture
def interference(monkeypatch) -> Interference:
    seen = Interference()
    real = delivery.publish

    def publish_script(**kwargs):
        seen.before_call()
        return real(**kwargs)

    monkeypatch.setattr(delivery, "publish", publish_script)
    return seen


@pytest.fixture
def steps(redis, warehouse, rep_notice) -> dict[str, Step]:
    token_key = subscription_keys.subscribers_token(warehouse.pk, rep_notice.pk)

    def moved() -> None:  # another process changed a user, a type, a warehouse...
        redis.delete(version_key())

    def changed() -> None:  # the set was written again (same members, a new token)
        count = as_text(redis.get(token_key)).partition(":")[0]
        redis.set(token_key, f"{count}:{uuid.uuid4().hex}")

    def lost() -> None:  # Redis lost the pair (emptied, restarted empty, the token evicted)
        redis.delete(token_key)

    def nothing() -> None:
        pass

    return {"moved": moved, "changed": changed, "lost": lost, "nothing": nothing}


@pytest.mark.single_redis  # on Redis Cluster the version is read first: it never moves under it
def test_replies_that_each_ask_for_a_remedy_end_in_503_within_one_budget(
    redis, warehouse, subscribed, send, rebuilds, interference, steps
):
    send()  # this process holds the directory and the subscribers
    interference.start(
        steps["moved"], steps["changed"], steps["changed"], steps["lost"], steps["changed"]
    )

    with pytest.raises(store.StaleSubscribers) as caught:
        send(title="never delivered")

    assert caught.value.kind is ErrorKind.UNAVAILABLE  # 503 with Retry-After over the API
    # One call, then one per remedy the budget allows: a fresh directory, the members sent
    # back twice, one rebuild. Not a budget per nested loop (1 + 3 + 3 calls).
    assert interference.calls == 5
    assert rebuilds == [warehouse.pk]
    assert redis.hlen(keys.contents(warehouse.pk)) == 1  # the first publish only


def test_a_publish_over_the_api_whose_subscribers_keep_changing_is_503_after_its_budget(
    redis, client_for, publisher, warehouse, subscribed, rebuilds, interference, steps
):
    interference.start(steps["changed"], steps["changed"], steps["lost"], steps["changed"])

    response = client_for(publisher).post(
        "/api/v1/notifications/",
        {"message_type": "REP_NOTICE", "warehouse": warehouse.pk, "title": "Replenish"},
        format="json",
    )

    assert response.status_code == 503
    assert response["Retry-After"].isdigit()
    assert response.json()["detail"]
    # The members sent back twice and one rebuild, then the budget is spent: the rebuild
    # does not start the count of retries again.
    assert interference.calls == 4
    assert rebuilds == [warehouse.pk]
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


def test_a_mirror_lost_again_after_its_rebuild_is_rebuilt_once_then_503(
    monkeypatch, redis, warehouse, rep_notice, subscribed, send, interference
):
    rebuilt: list[int] = []
    real = subscription_services.rebuild_warehouse

    def evicted_again(warehouse_id, **options):
        rebuilt.append(warehouse_id)
        real(warehouse_id, **options)
        redis.delete(subscription_keys.subscribers_token(warehouse.pk, rep_notice.pk))

    monkeypatch.setattr(subscription_services, "rebuild_warehouse", evicted_again)
    redis.delete(subscription_keys.subscribers_token(warehouse.pk, rep_notice.pk))

    with pytest.raises(store.SubscribersUnavailable) as caught:
        send()

    assert isinstance(caught.value, REDIS_UNAVAILABLE)  # 503 over the API; rules retry it
    assert rebuilt == [warehouse.pk]
    assert interference.calls == 2
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


@pytest.mark.single_redis  # on Redis Cluster the version is read first: it never moves under it
def test_each_reply_gets_its_one_remedy_and_the_publish_goes_through(
    redis, warehouse, subscribed, send, rebuilds, interference, steps
):
    send()  # this process holds the directory and the subscribers' token
    # A fresh directory, then a rebuild, then the rebuilt set's token, then delivered.
    interference.start(steps["moved"], steps["lost"], steps["nothing"])

    result = send(title="after all that")

    assert result.recipients == 2
    assert interference.calls == 4
    assert rebuilds == [warehouse.pk]
    for user in subscribed:
        assert result.id in seen_by(user, warehouse)
    assert redis.hlen(keys.contents(warehouse.pk)) == 2


@pytest.mark.single_redis
def test_a_moved_directory_within_a_request_is_the_requests_to_answer_again(
    redis, warehouse, rep_notice, subscribed, send, interference, steps
):
    """A request that answers from the held directory (directory/held.py) read more from it
    than the publish did: the request answers again, the publish does not refresh alone."""
    send()
    interference.start(steps["moved"])

    with directory.request_scope(), directory.holding(), pytest.raises(DirectoryChanged):
        services.publish(message_type=rep_notice, warehouse=warehouse, title="x")

    assert interference.calls == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 1


def test_a_remedy_the_budget_does_not_allow_is_not_applied(
    monkeypatch, redis, warehouse, subscribed, send, rebuilds, interference, steps
):
    monkeypatch.setattr(
        publishing, "BUDGET", {**publishing.BUDGET, publishing.Remedy.REBUILD_MIRROR: 0}
    )
    interference.start(steps["lost"])

    with pytest.raises(store.SubscribersUnavailable):
        send()

    assert rebuilds == []
    assert interference.calls == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 0


@pytest.mark.single_redis  # on Redis Cluster the version is read first: it never moves under it
def test_a_directory_that_moves_more_often_than_the_budget_allows_is_503(
    monkeypatch, redis, warehouse, subscribed, send, interference, steps
):
    send()
    monkeypatch.setattr(
        publishing, "BUDGET", {**publishing.BUDGET, publishing.Remedy.REFRESH_DIRECTORY: 0}
    )
    interference.start(steps["moved"])

    with translation.override("zh-hans"), pytest.raises(publishing.DirectoryChanging) as caught:
        send()

    assert caught.value.kind is ErrorKind.UNAVAILABLE
    assert caught.value.message.startswith("发布期间仓库或消息类型变化了 1 次")
    assert interference.calls == 1
    assert redis.hlen(keys.contents(warehouse.pk)) == 1
