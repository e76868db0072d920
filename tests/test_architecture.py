"""Boundaries between the layers (architecture: "the rules are data in, data out").

``sl5r.rules`` is pure Python: it must not import Django, the web/async stack, the
project's apps or any other part of the ``sl5r`` project.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


# The serving plumbing is fenced by .importlinter's `serving-plumbing` (apps reach it only
# through sl5r.serving.interface) and `rules-pure` contracts; grimp sees function-local
# imports too, so the hand-written scans that said the same are gone (issue 41).


# --- The stack of docs/architecture.md: .importlinter and what it cannot see -----------------

PROJECT_PACKAGES = ("sl5r", "referees", "battles", "strategic_map")
IMPORT_CONTRACTS = BASE_DIR / ".importlinter"


def project_modules() -> list[Path]:
    return [
        path
        for package in PROJECT_PACKAGES
        for path in sorted((BASE_DIR / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def is_project(name: str) -> bool:
    return any(within(name, package) for package in PROJECT_PACKAGES)


# Underscored by Django, public all the same (its documented Model._meta API).
DJANGO_PUBLIC = frozenset({"_meta"})


def private_uses(path: Path) -> list[str]:
    """Where ``path`` uses a ``_private`` name of another project module: imported by name
    (``from referees.services import _locked``) or read off an imported module
    (``services._locked``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = module_name(path) if path.is_relative_to(BASE_DIR) else path.stem
    modules: dict[str, str] = {}  # local name -> the project module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_project(alias.name):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = imported_from(path, node)
            if not is_project(source) or source == own:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.lineno}: {alias.name} from {source}")
                else:
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in DJANGO_PUBLIC
            and modules[node.value.id] != own
        ):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_uses_a_private_name_of_another() -> None:
    """A ``_name`` is its module's own: the code that needs it elsewhere gets a public name
    (import-linter sees modules, not names, so this scan keeps that half of the contract)."""
    offences = [
        f"{path.relative_to(BASE_DIR)}:{use}"
        for path in project_modules()
        for use in private_uses(path)
    ]

    assert not offences, "private names used across modules:\n" + "\n".join(offences)


def local_project_imports(path: Path) -> list[str]:
    """Imports of project modules inside a function: how a cycle hides from the linter's
    reader (import-linter counts them, but a reader of the module's head does not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and is_project(imported_from(path, node)):
                found.append(f"{node.lineno}: from {imported_from(path, node)}")
            elif isinstance(node, ast.Import):
                found.extend(
                    f"{node.lineno}: import {alias.name}"
                    for alias in node.names
                    if is_project(alias.name)
                )
    return found


# Where a function-local import is the framework's way, not a dodged cycle: Django reads the
# settings and app registry before the apps can be imported (AppConfig.ready connects the
# signal receivers there, as Django's documentation says), a management command's heavy
# dependencies are loaded only when it runs, and ``make cluster`` configures Celery only once
# it has written the environment the app reads.
LOCAL_IMPORTS_ALLOWED = (
    "sl5r/settings.py",
    "sl5r/asgi.py",
    "sl5r/wsgi.py",
    "sl5r/celery.py",
    "sl5r/cluster.py",
    "referees/apps.py",
)


def test_the_apps_import_each_other_at_module_level_only() -> None:
    offences = [
        f"{path.relative_to(BASE_DIR)}:{use}"
        for path in project_modules()
        if str(path.relative_to(BASE_DIR)) not in LOCAL_IMPORTS_ALLOWED
        and "management" not in path.parts
        for use in local_project_imports(path)
    ]

    assert not offences, "function-local imports of project modules:\n" + "\n".join(offences)


def contract_modules() -> set[str]:
    text = IMPORT_CONTRACTS.read_text(encoding="utf-8")
    return set(re.findall(r"\b(?:sl5r|referees|battles|strategic_map)(?:\.\w+)*", text))


def holds_no_code(path: Path) -> bool:
    """A package's ``__init__`` with at most a docstring imports nothing, so needs no layer."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return path.name == "__init__.py" and all(
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body
    )


def test_every_module_has_a_place_in_the_import_contract() -> None:
    """A new module names its layer in .importlinter; one left out would escape the stack."""
    # The bare package names are the contract's root_packages, not places in a layer.
    listed = contract_modules() - set(PROJECT_PACKAGES)
    unplaced = []
    for path in project_modules():
        name = module_name(path)
        if name in PROJECT_PACKAGES or holds_no_code(path):
            continue  # a package's bare __init__: its modules are placed one by one
        if not any(name == placed or name.startswith(f"{placed}.") for placed in listed):
            unplaced.append(name)

    assert not unplaced, "modules in no layer of .importlinter:\n" + "\n".join(unplaced)


def test_the_private_name_scan_sees_both_ways_of_reaching_one(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from referees.services import _locked\nfrom referees import services\n"
        "services._refuse()\nservices.order_give()\n",
        encoding="utf-8",
    )

    uses = private_uses(probe)

    assert uses == ["1: _locked from referees.services", "3: services._refuse"]


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # A kernel module importing the API: an arrow running up the stack.
        (
            "referees/kernel/core.py",
            "import referees.api",
            "- referees.kernel.core -> referees.api",
        ),
        # A page reaching the hand-tuned SQL past the unit of work: a fence.
        (
            "referees/pages/home.py",
            "import referees.kernel.prepared_sql",
            "- referees.pages.home -> referees.kernel.prepared_sql",
        ),
        # An app reaching the serving plumbing past its interface, inside a function.
        (
            "battles/selectors.py",
            "def probe() -> None:\n    from sl5r.serving import threaded_http",
            "- battles.selectors -> sl5r.serving.threaded_http",
        ),
        # A page importing the API: the user interfaces are independent of each other.
        ("referees/pages/home.py", "import referees.api", "- referees.pages.home -> referees.api"),
    ],
)
def test_the_import_contracts_fail_on_an_import_they_forbid(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    """The contracts are not vacuous: each forbidden kind of import breaks one."""
    tree = tmp_path / "tree"
    for package in PROJECT_PACKAGES:
        shutil.copytree(
            BASE_DIR / package, tree / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(IMPORT_CONTRACTS, tree / ".importlinter")
    target = tree / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    linter = Path(sys.executable).with_name("lint-imports")
    if not linter.exists():
        pytest.skip("import-linter is not installed (requirements-dev.txt)")

    result = subprocess.run(
        [str(linter), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=600
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert broken in result.stdout


def test_only_strategic_map_reads_or_writes_the_board_json() -> None:
    """``Campaign.board`` is read and written through ``strategic_map.board.Board`` only:
    no module of the other apps touches the attribute (``campaign.board``)."""
    offences = []
    for app in ("referees", "battles"):
        for path in sorted((BASE_DIR / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            offences.extend(
                f"{path.relative_to(BASE_DIR)}:{node.lineno}: .board"
                for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and node.attr == "board"
            )

    assert not offences, "the board's JSON touched outside strategic_map:\n" + "\n".join(offences)


# Issue 41: a module of the two apps holds one idea and a function one step. Hot paths that
# a benchmark justifies longer may be named here, with the benchmark (none needs it today).
MODULE_LINES_MOST = 600
FUNCTION_LINES_MOST = 80
LONG_ALLOWED: dict[str, str] = {}


def long_code(path: Path, name: str) -> list[str]:
    """What in ``path`` is over the sizes above, each as ``name[:line] function: lines``."""
    text = path.read_text(encoding="utf-8")
    found = []
    if len(text.splitlines()) > MODULE_LINES_MOST:
        found.append(f"{name}: {len(text.splitlines())} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > FUNCTION_LINES_MOST:
                found.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    return found


def test_no_module_of_the_apps_passes_600_lines_nor_a_function_80() -> None:
    offences = [
        found
        for app in ("referees", "battles")
        for path in sorted((BASE_DIR / app).rglob("*.py"))
        if "migrations" not in path.parts and str(path.relative_to(BASE_DIR)) not in LONG_ALLOWED
        for found in long_code(path, str(path.relative_to(BASE_DIR)))
    ]

    assert not offences, "too long to find one's way in:\n" + "\n".join(offences)


def test_the_size_check_counts_a_function_from_def_to_its_last_line(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"

    def body(lines: int) -> str:
        return "".join(f"    x = {n}\n" for n in range(lines))

    # 1 + 80 lines is one too many; 1 + 79 is just allowed.
    probe.write_text(
        f"def long() -> None:\n{body(80)}\n\ndef short() -> None:\n{body(79)}", encoding="utf-8"
    )

    assert long_code(probe, "probe.py") == ["probe.py:1 long: 81 lines"]
