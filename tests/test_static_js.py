"""The pages' scripts (static/js/): native ES modules that share their helpers.

Every relative import names a module that exports what is imported, so that a split cannot
leave a page with an import that fails only in the part a browser test did not open. The
HTML and SVG element builders (dom.js) and the clock format (format.js) are defined once.
Every module of the battle table (static/js/battle_table/) is loaded from its page's entry
point, static/js/battle_table.js.

Without DEBUG the pages name the hashed entry points (``CompressedManifestStaticFilesStorage``)
and a hashed module keeps its imports as written ("./battle_table/state.js"): the browser
then asks for the unhashed files beside it, which collectstatic keeps and WhiteNoise serves.
The last test walks that graph through WhiteNoise as a phone would.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

BASE_DIR = Path(__file__).resolve().parents[1]
JS_DIR = BASE_DIR / "static" / "js"
BATTLE_ENTRY = JS_DIR / "battle_table.js"
BATTLE_DIR = JS_DIR / "battle_table"

# `import {a, b as c} from "./x.js";` (over several lines too), `import "./x.js";` and
# `export {a} from "./x.js";`, at the start of a line: the examples in comments start with
# "//" or " *" and are not taken.
IMPORT = re.compile(
    r"^(?:import|export)\s*(?:\{(?P<names>[^}]*)\}\s*from\s*)?\"(?P<path>[^\"]+)\"", re.M
)
EXPORTED = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([\w$]+)", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}", re.M)


def scripts() -> list[Path]:
    files = sorted(JS_DIR.rglob("*.js"))
    assert BATTLE_ENTRY in files, "static/js/battle_table.js is gone"
    return files


def relative(path: Path) -> str:
    return path.relative_to(BASE_DIR).as_posix()


def imports(text: str) -> list[tuple[str, list[str]]]:
    """Each relative import of a module: its path as written and the names it takes."""
    found = []
    for match in IMPORT.finditer(text):
        names = [n.split(" as ")[0].strip() for n in (match["names"] or "").split(",")]
        found.append((match["path"], [n for n in names if n]))
    return found


def exports(text: str) -> set[str]:
    names = set(EXPORTED.findall(text))
    for group in EXPORT_LIST.findall(text):
        names |= {n.split(" as ")[-1].strip() for n in group.split(",") if n.strip()}
    return names


def imported_files(path: Path) -> list[Path]:
    return [(path.parent / spec).resolve() for spec, _ in imports(path.read_text(encoding="utf-8"))]


def test_every_import_of_a_page_script_names_a_module_that_exports_it() -> None:
    problems = []
    for path in scripts():
        for spec, names in imports(path.read_text(encoding="utf-8")):
            if not spec.startswith("./") and not spec.startswith("../"):
                problems.append(f"{relative(path)}: {spec!r} is not a relative import")
                continue
            target = (path.parent / spec).resolve()
            if not target.is_file():
                problems.append(f"{relative(path)}: {spec} does not exist")
                continue
            missing = set(names) - exports(target.read_text(encoding="utf-8"))
            if missing:
                problems.append(f"{relative(path)}: {spec} does not export {sorted(missing)}")

    assert problems == []


def test_the_html_and_svg_element_builders_are_defined_once_in_dom_js() -> None:
    builder = re.compile(
        r"function\s+(?:el|svgEl)\s*\(|(?:const|let)\s+(?:el|svgEl)\s*=|createElementNS\("
        r"|document\.createElement\(\s*[A-Za-z_$][\w$]*\s*\)"
    )
    others = [
        f"{relative(path)}: {match.group(0)}"
        for path in scripts()
        if path != JS_DIR / "dom.js"
        for match in builder.finditer(path.read_text(encoding="utf-8"))
    ]

    assert others == []
    assert {"el", "svgEl"} <= exports((JS_DIR / "dom.js").read_text(encoding="utf-8"))


def test_the_clock_format_is_defined_once_in_format_js() -> None:
    clock = re.compile(r"function\s+formatClock\b|%\s*3600\b")
    others = [
        f"{relative(path)}: {match.group(0)}"
        for path in scripts()
        if path != JS_DIR / "format.js"
        for match in clock.finditer(path.read_text(encoding="utf-8"))
    ]

    assert others == []
    assert "formatClock" in exports((JS_DIR / "format.js").read_text(encoding="utf-8"))


def test_every_module_of_the_battle_table_is_loaded_from_its_entry_point() -> None:
    seen: set[Path] = set()
    waiting = [BATTLE_ENTRY.resolve()]
    while waiting:
        path = waiting.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        waiting.extend(imported_files(path))
    modules = {path.resolve() for path in BATTLE_DIR.glob("*.js")}

    assert modules, "static/js/battle_table/ has no module"
    assert sorted(relative(p) for p in modules - seen) == []
    assert {JS_DIR / "dom.js", JS_DIR / "players.js"} <= seen


def test_without_debug_the_collected_battle_table_loads_every_module_it_imports(
    tmp_path: Path,
) -> None:
    """collectstatic as ``make venue`` runs it, then the module graph of the hashed entry
    point fetched through WhiteNoise from the collected files alone."""
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    served = {
        "STATIC_ROOT": tmp_path,
        "STORAGES": storages,
        "WHITENOISE_USE_FINDERS": False,
        "WHITENOISE_AUTOREFRESH": False,
    }
    with override_settings(**served):
        call_command("collectstatic", interactive=False, verbosity=0)
        manifest = json.loads((tmp_path / "staticfiles.json").read_text(encoding="utf-8"))
        hashed = manifest["paths"]["js/battle_table.js"]
        assert hashed != "js/battle_table.js"
        client = Client()
        fetched: dict[str, int] = {}
        waiting = [hashed]
        while waiting:
            name = waiting.pop()
            if name in fetched:
                continue
            response = client.get(f"/static/{name}")
            fetched[name] = response.status_code
            if response.status_code != 200:
                continue
            assert "javascript" in response.headers["Content-Type"], name
            body = b"".join(response.streaming_content).decode("utf-8")  # type: ignore[attr-defined]
            for spec, _ in imports(body):
                waiting.append(posixpath.normpath(posixpath.join(posixpath.dirname(name), spec)))

    assert {name: status for name, status in fetched.items() if status != 200} == {}
    modules = {f"js/battle_table/{p.name}" for p in BATTLE_DIR.glob("*.js")}
    assert modules <= set(fetched)


@pytest.mark.parametrize("name", ["dom.js", "format.js"])
def test_a_shared_helper_module_imports_nothing(name: str) -> None:
    """dom.js and format.js sit under every page: they depend on no page's module."""
    assert imports((JS_DIR / name).read_text(encoding="utf-8")) == []
