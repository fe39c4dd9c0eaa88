"""Query parameters validated by a serializer's fields.

A poll's plain query (ids and numbers in range) is read without a serializer
(notifications/api/serializers.py: `inbox_query`, `warehouse_from_query`); everything else,
and every other endpoint's query, is validated by the serializer itself (`validated`, from
config/validation.py, which request bodies use too), so the values, defaults and 400 bodies
are DRF's (tests/config/test_query_params.py compares the plain paths with it on generated
input).
"""

from config.validation import validated

__all__ = ["validated"]
