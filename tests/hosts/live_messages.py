"""The server's live messages as ``static/js/live_messages.json`` lists them, read as live.js
reads them: the phones of ``tests.hosts.phone`` take every frame through ``message_read``, and
``tests/referees/live/test_live_messages.py`` holds the server's messages and live.js to the same
table.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parents[2] / "static" / "js" / "live_messages.json"
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "string": (str,),
    "object": (dict,),
    "array": (list,),
    "boolean": (bool,),
}


class UnfitMessage(ValueError):
    """A frame that is not one of the table's messages: not JSON, an unknown type, a field
    missing, of another type, null where it may not be, or one the table does not list."""


@cache
def messages() -> dict[str, dict[str, dict[str, Any]]]:
    """Each message type's fields (name → ``{"type", "nullable", "optional"}``)."""
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    return {kind: spec["fields"] for kind, spec in table["messages"].items()}


def value_problem(value: Any, field: dict[str, Any]) -> str | None:
    if value is None:
        return None if field.get("nullable") else "is null"
    kind = field["type"]
    fits = isinstance(value, JSON_TYPES[kind]) and not (
        kind == "integer" and isinstance(value, bool)
    )
    return None if fits else f"is not of type {kind}: {value!r}"


def message_problems(message: Any) -> list[str]:
    """What keeps ``message`` (decoded JSON) from fitting the table; empty when it fits."""
    if not isinstance(message, dict):
        return [f"not a JSON object: {message!r}"]
    kind = message.get("type")
    fields = messages().get(kind) if isinstance(kind, str) else None
    if fields is None:
        return [f"unknown type {kind!r}"]
    known = {"type", *fields}
    problems = [f"{name}: not a field of {kind}" for name in message if name not in known]
    for name, field in fields.items():
        if name not in message:
            if not field.get("optional"):
                problems.append(f"{name}: missing")
            continue
        problem = value_problem(message[name], field)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


def message_read(text: str | bytes) -> dict[str, Any]:
    """A frame from the server as a page takes it: the message, every optional field it
    leaves out there as None; ``UnfitMessage`` when it is not one of the table's."""
    try:
        message = json.loads(text)
    except ValueError as error:
        raise UnfitMessage(f"not JSON ({error}): {text[:200]!r}") from None
    problems = message_problems(message)
    if problems:
        raise UnfitMessage(f"{'; '.join(problems)}, in {str(text)[:300]}")
    for name in messages()[message["type"]]:
        message.setdefault(name, None)
    return dict(message)
