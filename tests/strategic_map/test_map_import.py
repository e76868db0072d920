"""The map import service and the ``loadmap`` command (R2: the bundled map)."""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from sl5r.rules.errors import MapError
from strategic_map.models import Map
from strategic_map.services import map_import

pytestmark = pytest.mark.django_db

BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture
def bundled_map() -> dict[str, Any]:
    """The bundled Rokugan map as plain JSON data."""
    text = resources.files("sl5r.rules").joinpath("maps/rokugan.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@pytest.fixture
def bad_map(bundled_map: dict[str, Any]) -> dict[str, Any]:
    """The bundled map with one extra border to a province that does not exist."""
    data = copy.deepcopy(bundled_map)
    data["borders"].append([data["provinces"][0]["id"], "x"])
    return data


def test_map_import_stores_a_valid_map(bundled_map: dict[str, Any]) -> None:
    """A valid map is stored under its slug with its name and its JSON unchanged."""
    map_obj = map_import(slug="rokugan", data=bundled_map)

    stored = Map.objects.get(slug="rokugan")
    assert stored.pk == map_obj.pk
    assert stored.name == bundled_map["name"]
    assert stored.data == bundled_map


def test_map_import_updates_a_map_with_the_same_slug(bundled_map: dict[str, Any]) -> None:
    """Importing again under the same slug updates the row instead of adding one."""
    first = map_import(slug="rokugan", data=bundled_map)
    renamed = {**bundled_map, "name": "Rokugan, second edition"}

    second = map_import(slug="rokugan", data=renamed)

    assert second.pk == first.pk
    assert Map.objects.count() == 1
    assert Map.objects.get().name == "Rokugan, second edition"


def test_map_import_refuses_a_bad_map_and_stores_nothing(bad_map: dict[str, Any]) -> None:
    """A map with a border to an unknown province is refused with a one-line reason."""
    index = len(bad_map["borders"]) - 1

    with pytest.raises(MapError) as excinfo:
        map_import(slug="broken", data=bad_map)

    message = str(excinfo.value)
    assert "\n" not in message
    assert f"borders[{index}]" in message
    assert 'unknown province "x"' in message
    assert not Map.objects.exists()


@pytest.mark.parametrize("slug", ["", "not a slug", "x" * 65])
def test_map_import_refuses_a_bad_slug(bundled_map: dict[str, Any], slug: str) -> None:
    """The slug must be a non-empty slug of at most 64 characters."""
    with pytest.raises(ValidationError):
        map_import(slug=slug, data=bundled_map)

    assert not Map.objects.exists()


def test_loadmap_loads_the_bundled_map() -> None:
    """Without FILE, loadmap stores the bundled map: 39 provinces, 85 borders (R2)."""
    out = io.StringIO()

    call_command("loadmap", stdout=out)

    stored = Map.objects.get(slug="rokugan")
    assert len(stored.data["provinces"]) == 39
    assert len(stored.data["borders"]) == 85
    assert "39 provinces, 85 borders" in out.getvalue()


def test_loadmap_is_idempotent() -> None:
    """Loading the bundled map twice leaves one map."""
    call_command("loadmap", stdout=io.StringIO())
    call_command("loadmap", stdout=io.StringIO())

    assert list(Map.objects.values_list("slug", flat=True)) == ["rokugan"]


def test_loadmap_reads_a_file_under_the_given_slug(
    bundled_map: dict[str, Any], tmp_path: Path
) -> None:
    """FILE and --slug store that file under that slug."""
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(bundled_map), encoding="utf-8")

    call_command("loadmap", str(path), "--slug", "league-2026", stdout=io.StringIO())

    assert Map.objects.get(slug="league-2026").data == bundled_map


def test_loadmap_refuses_a_bad_map_with_status_2(bad_map: dict[str, Any], tmp_path: Path) -> None:
    """A bad map is a CommandError with return code 2 naming the file and the problem."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad_map), encoding="utf-8")

    with pytest.raises(CommandError) as excinfo:
        call_command("loadmap", str(path), stdout=io.StringIO())

    assert excinfo.value.returncode == 2
    assert str(excinfo.value).startswith(f"{path}: ")
    assert 'unknown province "x"' in str(excinfo.value)
    assert not Map.objects.exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_loadmap_refuses_a_file_that_is_not_a_map_object(
    tmp_path: Path, content: str, expected: str
) -> None:
    """Broken JSON, or JSON that is not an object, is refused with status 2."""
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(CommandError) as excinfo:
        call_command("loadmap", str(path), stdout=io.StringIO())

    assert excinfo.value.returncode == 2
    assert expected in str(excinfo.value)


def test_loadmap_refuses_a_missing_file(tmp_path: Path) -> None:
    """A file that cannot be read is refused with status 2."""
    with pytest.raises(CommandError) as excinfo:
        call_command("loadmap", str(tmp_path / "missing.json"), stdout=io.StringIO())

    assert excinfo.value.returncode == 2


@pytest.mark.slow  # a manage.py process of its own
def test_loadmap_command_line_exits_2_with_one_line_on_stderr(
    bad_map: dict[str, Any], tmp_path: Path
) -> None:
    """Run as a program, a bad map exits with status 2 and one line on standard error."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad_map), encoding="utf-8")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("REDIS_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
    )

    result = subprocess.run(
        [sys.executable, "manage.py", "loadmap", str(path)],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )

    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "borders[" in lines[0]
    assert result.stdout == ""
