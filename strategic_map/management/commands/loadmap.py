"""``manage.py loadmap [--slug SLUG] [FILE]``: import a map, or the bundled Rokugan map."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sl5r.rules.errors import MapError
from strategic_map.services import map_import

BUNDLED_MAP = ("sl5r.rules", "maps/rokugan.json")
BUNDLED_SLUG = "rokugan"


class Command(BaseCommand):
    help = (
        "Validate a map JSON file and store it (updating a map with the same slug). "
        "Without FILE, load the bundled Rokugan map."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file",
            nargs="?",
            metavar="FILE",
            help="map JSON file ('-' for standard input); default: the bundled map",
        )
        parser.add_argument(
            "--slug",
            help="slug to store the map under; default: the map's 'id', else the file name",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        file: str | None = options["file"]
        if file is None:
            package, name = BUNDLED_MAP
            source = f"{package.replace('.', '/')}/{name}"
            try:
                text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
            except (ModuleNotFoundError, OSError) as exc:
                raise CommandError(
                    f"{source}: cannot read the bundled map: {exc}", returncode=2
                ) from None
            default_slug = BUNDLED_SLUG
        elif file == "-":
            source = "<stdin>"
            text = sys.stdin.read()
            default_slug = ""
        else:
            source = file
            try:
                text = Path(file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{source}: cannot read: {exc}", returncode=2) from None
            default_slug = Path(file).stem

        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            # JSONDecodeError, an integer of over 4300 digits (ValueError), or nesting deeper
            # than the parser's recursion allows.
            problem = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            raise CommandError(f"{source}: not valid JSON: {problem}", returncode=2) from None
        if not isinstance(data, dict):
            raise CommandError(f"{source}: the map must be a JSON object", returncode=2)

        slug = options["slug"] or _map_id(data) or default_slug
        if not slug:
            raise CommandError(f"{source}: give --slug (the map has no 'id')", returncode=2)
        try:
            map_obj = map_import(slug=slug, data=data)
        except ValidationError as exc:
            raise CommandError(f"--slug {slug!r}: {' '.join(exc.messages)}", returncode=2) from None
        except MapError as exc:
            raise CommandError(f"{source}: {exc}", returncode=2) from None

        provinces = len(data.get("provinces", []))
        borders = len(data.get("borders", []))
        self.stdout.write(
            f"Loaded map {map_obj.slug!r} ({map_obj.name}): "
            f"{provinces} provinces, {borders} borders."
        )


def _map_id(data: dict[str, Any]) -> str:
    value = data.get("id")
    return value if isinstance(value, str) else ""
