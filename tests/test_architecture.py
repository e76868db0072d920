"""Boundaries between the layers (architecture: "the rules are data in, data out").

``sl5r.rules`` is pure Python: it must not import Django, the web/async stack, the
project's apps or any other part of the ``sl5r`` project.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[1]
RULES_DIR = BASE_DIR / "sl5r" / "rules"

# Top-level packages the rules engine must never import.
FORBIDDEN = frozenset(
    {
        "django",
        "channels",
        "channels_redis",
        "daphne",
        "celery",
        "ninja",
        "psycopg",
        "redis",
        "strategic_map",
        "referees",
        "battles",
    }
)


def rules_modules() -> list[Path]:
    assert RULES_DIR.is_dir(), f"{RULES_DIR.relative_to(BASE_DIR)}/ does not exist"
    files = sorted(RULES_DIR.rglob("*.py"))
    assert files, f"no Python module under {RULES_DIR.relative_to(BASE_DIR)}/"
    return files


def module_name(path: Path) -> str:
    parts = list(path.relative_to(BASE_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, relative imports made absolute, with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, imported_from(path, node)))
    return found


def imported_from(path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from … import`` in ``path`` reads from, a relative one made absolute."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def test_rules_package_imports_nothing_from_django_or_the_apps() -> None:
    """No module under sl5r/rules imports Django, the apps or the rest of the project."""
    offences = []
    for path in rules_modules():
        for lineno, name in imported_modules(path):
            top = name.split(".")[0]
            outside_rules = top == "sl5r" and not (
                name == "sl5r.rules" or name.startswith("sl5r.rules.")
            )
            if top in FORBIDDEN or outside_rules:
                offences.append(f"{path.relative_to(BASE_DIR)}:{lineno}: imports {name}")

    assert not offences, "sl5r.rules must stay pure:\n" + "\n".join(offences)


def test_rules_package_imports_without_django() -> None:
    """Importing every module of sl5r.rules loads neither Django nor any settings."""
    rules_modules()  # A clear failure when the package is missing.
    script = (
        "import importlib, pkgutil, sys\n"
        "import sl5r.rules as rules\n"
        "for info in pkgutil.walk_packages(rules.__path__, 'sl5r.rules.'):\n"
        "    importlib.import_module(info.name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(FORBIDDEN)!r})\n"
        "assert not loaded, loaded\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}

    result = subprocess.run(
        [sys.executable, "-c", script], cwd=BASE_DIR, env=env, capture_output=True, text=True
    )

    assert result.returncode == 0, result.stderr


# The serving plumbing (sl5r/serving/): the apps reach it only through this module.
SERVING = "sl5r.serving"
SERVING_INTERFACE = "sl5r.serving.interface"
APP_DIRS = ("referees", "battles", "strategic_map")


def imported_targets(path: Path) -> list[tuple[int, str]]:
    """What ``path`` imports, each as a dotted path, at module level or in a function:
    ``import a.b`` gives ``a.b``, ``from a import b`` gives ``a.b`` (``b`` may be a module:
    ``from sl5r.serving import threaded_http`` is the module it names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = imported_from(path, node)
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def test_apps_reach_the_serving_plumbing_only_through_its_interface() -> None:
    """No module of referees, battles or strategic_map imports sl5r.serving or a module of
    it other than sl5r.serving.interface, at module level or inside a function."""
    offences = []
    for app in APP_DIRS:
        paths = sorted((BASE_DIR / app).rglob("*.py"))
        assert paths, f"no Python module under {app}/"
        for path in paths:
            for lineno, name in imported_targets(path):
                if within(name, SERVING) and not within(name, SERVING_INTERFACE):
                    offences.append(f"{path.relative_to(BASE_DIR)}:{lineno}: imports {name}")

    assert not offences, "apps import the serving plumbing itself:\n" + "\n".join(offences)


def test_rules_package_imports_nothing_from_the_serving_plumbing() -> None:
    offences = [
        f"{path.relative_to(BASE_DIR)}:{lineno}: imports {name}"
        for path in rules_modules()
        for lineno, name in imported_targets(path)
        if within(name, SERVING)
    ]

    assert not offences, "sl5r.rules imports sl5r.serving:\n" + "\n".join(offences)


def test_the_import_scan_sees_the_serving_modules_a_from_import_names(tmp_path: Path) -> None:
    """``from sl5r.serving import threaded_http`` inside a function counts as importing it."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from sl5r.serving import interface, threaded_http\n", encoding="utf-8"
    )

    names = [name for _line, name in imported_targets(probe)]

    assert names == ["sl5r.serving.interface", "sl5r.serving.threaded_http"]
