"""Opaque page cursors of the in-memory fakes: a kind and a value, base64-wrapped; a cursor of
another kind, or anything else, is refused as a real store refuses it (``ValidationFailed``)."""

from __future__ import annotations

import base64
import binascii
import json

from agentmem.errors import ValidationFailed


def encode_cursor(kind: str, value: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([kind, value]).encode("utf-8")).decode("ascii")


def decode_cursor(kind: str, cursor: str) -> str:
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
        tag, value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, UnicodeError, ValueError, TypeError) as exc:
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]}) from exc
    if tag != kind or not isinstance(value, str):
        raise ValidationFailed("invalid cursor", details={"cursor": cursor[:64]})
    return value
