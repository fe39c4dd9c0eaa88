"""The stream fixtures (a real uvicorn server, an SSE reader) for the stream path's tests."""

from tests.stream.conftest import (  # noqa: F401  (fixtures)
    open_stream,
    session_cookie_for,
    stream_client,
    subscribed,
    token_for,
)
