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
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


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
