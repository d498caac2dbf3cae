"""The values of configured secrets (API keys, tokens, credentials passed to agents), kept out of
everything benchyard stores or prints.

The registry is filled when configurations are resolved: the variables providers take their keys
and headers from (`api_key_env`, `headers_env`), credential headers given literally, credentials
written into a provider's URL (`https://user:pass@host`, `?key=...`: `url_credentials`), and the
host variables a command agent is given (`pass_env`). `scrub` replaces every registered value in a text;
`scrub_in_place` does so through a whole record (dataclasses, exceptions, lists and dicts). Values
shorter than MIN_SECRET_CHARS are not registered: scrubbing them would mangle ordinary text.

This module imports nothing from benchyard, so that anything may use it.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

MIN_SECRET_CHARS = 6
REDACTED = "[redacted]"

KEY_LIKE_PARAMETER = re.compile(r"key|token|secret|passw|auth|sig|credential|session", re.I)
"""Query parameters whose values are credentials (`?key=`, `?api_key=`, `?access_token=`...)."""

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None


def register(*values: str | None) -> None:
    """Scrub these values from now on (None, and values under MIN_SECRET_CHARS, are ignored)."""
    global _pattern
    found = {
        form
        for value in values
        if value is not None and len(value.strip()) >= MIN_SECRET_CHARS
        for form in _forms(value.strip())
    }
    with _lock:
        if found <= _values:
            return
        _values.update(found)
        ordered = sorted(_values, key=len, reverse=True)  # the longest first: no partial leftovers
        _pattern = re.compile("|".join(map(re.escape, ordered)))


def register_variables(names: Iterable[str]) -> None:
    """Scrub the values the environment variables `names` hold now."""
    register(*(os.environ.get(name) for name in names))


def url_credentials(url: str) -> list[str]:
    """The credentials written into a URL: its user and password, and the values of key-like
    query parameters, as written and decoded."""
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password]
    except ValueError:
        return []
    found += [value for name, value in _query_pairs(parts.query) if KEY_LIKE_PARAMETER.search(name)]
    if parts.username is not None:  # as HTTP clients send them: Basic base64(user:password)
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode()).decode())
    return [form for value in found if value for form in {value, unquote(value)}]


def redact_url(url: str) -> str:
    """`url` as it may be stored or shown: its user and password, and the values of key-like
    query parameters, replaced by REDACTED (whatever their length)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{name}={REDACTED}" if value and KEY_LIKE_PARAMETER.search(name) else piece
        for piece, (name, value) in zip(
            parts.query.split("&"), _query_pairs(parts.query, every=True), strict=True
        )
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _query_pairs(query: str, *, every: bool = False) -> list[tuple[str, str]]:
    """Each `name=value` of a query as written (`every`: one pair per `&`-separated piece)."""
    pieces = query.split("&") if (query or every) else []
    pairs = [piece.partition("=")[::2] for piece in pieces]
    return pairs if every else [(name, value) for name, value in pairs if name]


def registered() -> bool:
    return _pattern is not None


def scrub(text: str) -> str:
    """`text` with every registered value replaced by REDACTED."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(REDACTED, text)


def scrub_value(value: Any) -> Any:
    """A copy of a JSON-like value (strings, lists, tuples, dicts) with secrets scrubbed."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        cleaned = scrub(value)
        return value if cleaned == value else cleaned  # keeps a str subclass (an enum) as it is
    if isinstance(value, dict):
        return {scrub_value(key): scrub_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_value(item) for item in value)
    return value


def scrub_in_place(*objects: Any) -> None:
    """Scrub the text fields of records in place: dataclass instances and exceptions (their
    attributes), and the lists and dicts they hold, however deep."""
    if _pattern is None:
        return
    seen: set[int] = set()
    for obj in objects:
        _scrub_object(obj, seen)


def _scrub_object(obj: Any, seen: set[int]) -> None:
    if obj is None or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, list):
        for index, item in enumerate(obj):
            obj[index] = _scrubbed_member(item, seen)
    elif isinstance(obj, dict):
        for key in list(obj):
            item = _scrubbed_member(obj[key], seen)
            cleaned_key = scrub_value(key)
            if cleaned_key is not key:
                del obj[key]
            obj[cleaned_key] = item
    elif dataclasses.is_dataclass(obj) or isinstance(obj, BaseException):
        attributes = vars(obj) if hasattr(obj, "__dict__") else {}
        for name, item in list(attributes.items()):
            cleaned = _scrubbed_member(item, seen)
            if cleaned is not item:
                object.__setattr__(obj, name, cleaned)  # frozen dataclasses too
        if isinstance(obj, BaseException):
            obj.args = tuple(_scrubbed_member(arg, seen) for arg in obj.args)


def _scrubbed_member(item: Any, seen: set[int]) -> Any:
    """A string scrubbed, a tuple rebuilt; anything mutable scrubbed where it is."""
    if isinstance(item, str):
        return scrub_value(item)
    if isinstance(item, tuple):
        return tuple(_scrubbed_member(member, seen) for member in item)
    _scrub_object(item, seen)
    return item


def _forms(value: str) -> set[str]:
    """The value, and the way it reads inside JSON text when it has characters JSON escapes."""
    escaped = json.dumps(value)[1:-1]
    return {value, escaped} if len(escaped) >= MIN_SECRET_CHARS else {value}


def forget_all() -> None:
    """Empty the registry (for tests)."""
    global _pattern
    with _lock:
        _values.clear()
        _pattern = None
