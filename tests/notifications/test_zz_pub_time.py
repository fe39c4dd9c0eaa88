import pytest
from config.redis import get_redis
from notifications import services
from subscriptions.models import MessageType, Subscription, Warehouse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("subscribers", [1, 100])
def test_pub_time(make_user, subscribers):
    w = Warehouse.objects.create(code="X1", name="x")
    t = MessageType.objects.create(code="XT", name="x", default_ttl_seconds=86400)
    for i in range(subscribers):
        Subscription.objects.create(message_type=t, warehouse=w, user=make_user(f"u{i}"))
    services.publish(message_type=t, warehouse=w, title="warm")
    redis = get_redis()
    redis.config_resetstat()
    for i in range(1000):
        services.publish(message_type=t, warehouse=w, title=f"n{i}")
    ev = redis.info("commandstats")["cmdstat_evalsha"]
    print(f"\npublish to {subscribers}: {ev['usec_per_call']:.1f} µs per script")
