"""The XML renderer for legacy clients: always well-formed, whatever the data holds.

djangorestframework-xml turns every dict key into an element name, so a notification whose
`data` has the key "bin code", "2nd" or `x><title>FORGED</title><y` made the whole poll
ill-formed (or injected markup). Here the keys of free-form objects (`data`, and any key that is
not a plain XML name) become an attribute instead, escaped like every text:

    <data><item key="bin code">A-01</item><item key="qty">-12</item></data>

Characters XML 1.0 cannot carry at all (most control characters, lone surrogates) are replaced
by U+FFFD, instead of failing the render.
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.xmlreader import AttributesImpl

from django.utils.encoding import force_str
from django.utils.xmlutils import SimplerXMLGenerator
from rest_framework_xml.renderers import XMLRenderer as DrfXMLRenderer

# Keys the renderer may use as element names as they are (a subset of XML names).
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
ITEM_TAG = "item"
KEY_ATTRIBUTE = "key"
NO_ATTRIBUTES = AttributesImpl({})  # the SAX type XMLGenerator takes (a dict works, untyped)


def xml_text(value: Any) -> str:
    return NOT_XML.sub("\ufffd", force_str(value))


class XMLRenderer(DrfXMLRenderer):
    # Values of these keys are objects whose keys come from users: rendered as <item key="">.
    free_form_keys = frozenset({"data"})

    def _to_xml(self, xml: SimplerXMLGenerator, data: Any, free_form: bool = False) -> None:
        if isinstance(data, list | tuple):
            for item in data:
                xml.startElement(self.item_tag_name, NO_ATTRIBUTES)
                self._to_xml(xml, item, free_form)
                xml.endElement(self.item_tag_name)
        elif isinstance(data, dict):
            for key, value in data.items():
                name = str(key)
                if free_form or not PLAIN_NAME.match(name):
                    xml.startElement(ITEM_TAG, AttributesImpl({KEY_ATTRIBUTE: xml_text(name)}))
                    self._to_xml(xml, value, free_form=True)
                    xml.endElement(ITEM_TAG)
                else:
                    xml.startElement(name, NO_ATTRIBUTES)
                    self._to_xml(xml, value, free_form=name in self.free_form_keys)
                    xml.endElement(name)
        elif data is not None:
            xml.characters(xml_text(data))
