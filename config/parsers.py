"""Request body parsers that refuse what would cost a worker dearly or poison what is stored.

Both read at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (one byte more tells "too large": 413)
before parsing anything, refuse nesting deeper than config.jsonvalues.JSON_MAX_DEPTH, and
answer every bad body with a JSON 400. JSON also refuses NaN, Infinity and numbers that
overflow to infinity; XML is parsed by defusedxml (no entities, no DTD).
"""

from __future__ import annotations

import decimal
import io
from collections.abc import Mapping
from typing import IO, Any

from defusedxml import ElementTree as DefusedElementTree
from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import parsers, renderers
from rest_framework.exceptions import ParseError
from rest_framework_xml.parsers import XMLParser as DrfXMLParser

from config import jsonvalues
from config.http_errors import RequestTooLarge


def read_capped(stream: IO[bytes] | None) -> bytes:
    """The whole body, or RequestTooLarge as soon as it passes the limit (never read further)."""
    if stream is None:
        return b""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None:
        return stream.read()
    body = stream.read(limit + 1)
    if len(body) > limit:
        raise RequestTooLarge()
    return body


def _encoding(parser_context: Mapping[str, Any] | None) -> str:
    """The body's charset: DRF's choice, which refuses codecs that are not text (bz2_codec...)."""
    # get_encoding is newer than djangorestframework-stubs.
    return str(parsers.get_encoding(parser_context or {}))  # type: ignore[attr-defined]


def _decoded(body: bytes, parser_context: Mapping[str, Any] | None) -> str:
    encoding = _encoding(parser_context)
    try:
        return body.decode(encoding)
    except UnicodeDecodeError:
        raise ParseError(
            _("The request body is not valid %(encoding)s text.") % {"encoding": encoding}
        ) from None


class JSONParser(parsers.BaseParser):
    media_type = "application/json"
    renderer_class = renderers.JSONRenderer

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        text = _decoded(read_capped(stream), parser_context)
        try:
            return jsonvalues.loads(text)
        except jsonvalues.JsonValueError as exc:
            raise ParseError(str(exc)) from None
        except ValueError as exc:
            raise ParseError(_("JSON parse error - %(reason)s") % {"reason": exc}) from None


class XMLParser(DrfXMLParser):
    """djangorestframework-xml's parser (defusedxml), capped in size and depth."""

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        body = read_capped(stream)
        encoding = _encoding(parser_context)
        try:
            parser = DefusedElementTree.DefusedXMLParser(encoding=encoding)
            tree = DefusedElementTree.parse(io.BytesIO(body), parser=parser, forbid_dtd=True)
        except (DefusedElementTree.ParseError, ValueError) as exc:
            raise ParseError(_("XML parse error - %(reason)s") % {"reason": exc}) from None
        root = tree.getroot()
        _check_depth(root)
        return self._xml_convert(root)

    def _type_convert(self, value: str | None) -> Any:
        converted = super()._type_convert(value)
        # "NaN" or "Infinity" stays the text it was: a number that is not finite is no number.
        if isinstance(converted, decimal.Decimal) and not converted.is_finite():
            return value
        return converted


def _check_depth(root: Any) -> None:
    """Refuse nesting deeper than JSON_MAX_DEPTH before the recursive conversion sees it."""
    limit = jsonvalues.JSON_MAX_DEPTH
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        if depth > limit:
            raise ParseError(_("XML may nest at most %(depth)d levels deep.") % {"depth": limit})
        stack.extend((child, depth + 1) for child in element)
