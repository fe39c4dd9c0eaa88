"""config.negotiation: its shortcut picks what DRF's negotiation picks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from config.negotiation import ContentNegotiation
from notifications.api.views import NotificationAPIView

RENDERERS = [r() for r in NotificationAPIView.renderer_classes]
ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "application/xml",
    "text/html",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "application/*",
    "image/png",
    "*/*; q=0.5",
    "",
]


def choose(negotiation, accept, query="", suffix=None):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/x/{query}", **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, RENDERERS, suffix)
    except NotAcceptable:
        return "406"
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=xml", "?format=api", "?a=1"])
@pytest.mark.parametrize("suffix", [None, "json", "xml"])
def test_the_shortcut_chooses_as_drf_does(accept, query, suffix):
    mine = choose(ContentNegotiation(), accept, query, suffix)
    assert mine == choose(DefaultContentNegotiation(), accept, query, suffix)


@given(accept=st.one_of(st.none(), st.text(alphabet="*/;=., aeijlnopqstx0123456789", max_size=40)))
def test_any_accept_header_chooses_as_drf_does(accept):
    assert choose(ContentNegotiation(), accept) == choose(DefaultContentNegotiation(), accept)
