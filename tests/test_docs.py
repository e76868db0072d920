"""The documentation stays short where a newcomer starts, and true to the code and itself.

The README is read in five minutes; every rule number the code, the tests and the docs cite
is one that docs/rules.md defines; and every relative link of README.md and docs/*.md leads
to a file (and, for a link into a Markdown file, to one of its headings).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import unquote

BASE_DIR = Path(__file__).resolve().parents[1]
README = BASE_DIR / "README.md"
DOCS = BASE_DIR / "docs"
RULES = DOCS / "rules.md"

README_MAX_BYTES = 6 * 1024

# Where rule numbers are cited: the code, the tests, the templates and the pages' scripts,
# and the docs other than the rules themselves.
CITING_DIRS = ("sl5r", "referees", "battles", "strategic_map", "tests", "templates", "static/js")
CITING_SUFFIXES = {".py", ".html", ".js", ".json", ".md", ".txt"}
SKIPPED_DIRS = {".venv", "__pycache__", "node_modules"}

# "R4", "R1.1", "(R11)", "R4–R9": a rule number is an R and dot-separated integers.
CITATION = re.compile(r"\bR\d+(?:\.\d+)*\b")
# docs/rules.md defines a number by a heading ("## R5. Carrying out the moves",
# "### R1.1 What each role may see") and, inside a section, by its numbered items: item 3
# of "## R5." is R5.3, as the rules themselves cite it.
RULE_HEADING = re.compile(r"^#{1,6}\s+(R\d+(?:\.\d+)*)\b")
ANY_HEADING = re.compile(r"^#{1,6}\s")
NUMBERED_ITEM = re.compile(r"^(\d+)\.\s")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def rules_defined(text: str) -> set[str]:
    """The rule numbers a rules file defines, by heading and by numbered item."""
    defined: set[str] = set()
    section: str | None = None
    in_code = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = RULE_HEADING.match(line)
        if heading:
            section = heading.group(1)
            defined.add(section)
            continue
        if ANY_HEADING.match(line):
            section = None  # a heading without a number (the glossary) ends the numbering
            continue
        item = NUMBERED_ITEM.match(line)
        if item and section is not None:
            defined.add(f"{section}.{item.group(1)}")
    return defined


def citing_files() -> Iterator[Path]:
    for name in CITING_DIRS:
        for path in sorted((BASE_DIR / name).rglob("*")):
            relative = path.relative_to(BASE_DIR)
            if SKIPPED_DIRS.intersection(relative.parts):
                continue
            if path.is_file() and path.suffix in CITING_SUFFIXES:
                yield path
    yield README
    for path in sorted(DOCS.glob("*.md")):
        if path != RULES:
            yield path


def undefined_citations(defined: set[str], files: Iterable[Path]) -> list[str]:
    """Each citation of a number not in ``defined``, as ``path:line: number``."""
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            for number in CITATION.findall(line):
                if number not in defined:
                    where = path.relative_to(BASE_DIR) if path.is_relative_to(BASE_DIR) else path
                    problems.append(f"{where}:{lineno}: {number}")
    return problems


def prose_lines(text: str) -> Iterator[str]:
    """The lines outside fenced code blocks, with inline code removed: links live there."""
    in_code = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code:
            yield INLINE_CODE.sub("", line)


def heading_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = INLINE_CODE.sub(lambda code: code.group(0).strip("`"), heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code and ANY_HEADING.match(line):
            anchor = heading_anchor(line.lstrip("#"))
            suffix, candidate = 0, anchor
            while candidate in found:  # GitHub numbers repeated headings: x, x-1, x-2
                suffix += 1
                candidate = f"{anchor}-{suffix}"
            found.add(candidate)
    return found


def broken_links(path: Path) -> list[str]:
    problems = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        targets = INLINE_LINK.findall(line) + REFERENCE_LINK.findall(line)
        for target in targets:
            # Other sites and the site's own routes ("/api/docs") are not files to check.
            if SCHEME.match(target) or target.startswith("/"):
                continue
            file_part, _, fragment = target.partition("#")
            file_part = unquote(file_part.split("?", 1)[0])
            destination = (path.parent / file_part).resolve() if file_part else path
            where = path.relative_to(BASE_DIR)
            if not destination.exists():
                problems.append(f"{where}: {target} (no such file)")
            elif (
                fragment
                and destination.suffix == ".md"
                and unquote(fragment).lower() not in anchors(destination)
            ):
                problems.append(f"{where}: {target} (no such heading)")
    return problems


def test_the_readme_is_at_most_six_kib() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, (
        f"README.md is {size} bytes, more than {README_MAX_BYTES}: move the detail to docs/"
    )


def test_the_rules_copy_defines_every_section_and_its_numbered_items() -> None:
    defined = rules_defined(RULES.read_text(encoding="utf-8"))
    assert {f"R{n}" for n in range(1, 15)} <= defined
    assert {"R1.1", "R3.1", "R3.5", "R5.1", "R5.5"} <= defined
    assert "R5." + "6" not in defined  # R5 has five items; spelled apart, as below


def test_every_rule_number_cited_in_the_code_tests_and_docs_is_defined_in_the_rules() -> None:
    defined = rules_defined(RULES.read_text(encoding="utf-8"))
    files = list(citing_files())
    cited = sum(len(CITATION.findall(path.read_text(errors="replace"))) for path in files)
    assert cited > 100, "the scan found almost no rule numbers: is it looking in the code?"
    problems = undefined_citations(defined, files)
    assert not problems, "rule numbers that docs/rules.md does not define:\n" + "\n".join(problems)


def test_a_cited_rule_number_the_rules_do_not_define_is_reported(tmp_path: Path) -> None:
    missing = "R" + "99"  # spelled apart, so that this file does not cite it itself
    citing = tmp_path / "module.py"
    citing.write_text(f"# Armies stay (R4, R5.2); see {missing}.\n", encoding="utf-8")
    defined = rules_defined("## R4. Turns\n\n## R5. Moves\n\n1. One.\n2. Two.\n")
    assert undefined_citations(defined, [citing]) == [f"{citing}:1: {missing}"]


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file() -> None:
    pages = [README, *sorted(DOCS.glob("*.md"))]
    problems = [problem for page in pages for problem in broken_links(page)]
    assert not problems, "broken links:\n" + "\n".join(problems)
