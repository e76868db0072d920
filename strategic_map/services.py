"""Writes to the strategic map. Callers: views, management commands, tasks."""

from __future__ import annotations

import json
from collections.abc import Mapping

from sl5r.rules.mapgraph import map_from_dict
from strategic_map.models import Map


def map_import(*, slug: str, data: Mapping[str, object]) -> Map:
    """Validate ``data`` as a map and store it under ``slug``; update the map if it exists.

    Raises ``django.core.exceptions.ValidationError`` for a bad slug and
    ``sl5r.rules.errors.MapError`` (one line naming the field and the problem) for a bad
    map; nothing is stored in either case.
    """
    # The model field's own checks: not blank, slug characters, maximum length.
    Map._meta.get_field("slug").clean(slug, None)
    map_from_dict(data)  # Raises MapError; the JSON itself is what is stored.
    # A JSON round trip stores plain lists and dicts, and fails here rather than in the
    # database on a value JSON cannot hold.
    stored = json.loads(json.dumps(dict(data)))
    raw_name = data.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else slug
    # Validation above runs outside any transaction; update_or_create is atomic itself.
    map_obj, _created = Map.objects.update_or_create(
        slug=slug, defaults={"name": name[:200], "data": stored}
    )
    return map_obj
