"""A list of players as judges hand it in: pasted (one player a line) or a CSV file, read
into ``RosterLine``s for ``referees.services.roster`` to preview and register.

The roster page and the players API both read a list here, so a list reads the same,
line numbers and refusals included, whichever way it comes. What R1 makes of the lines
(a clan and a role proposed, every problem per line) is the service's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from django.utils.translation import gettext as _

from referees.kernel.core import refusal
from referees.services.roster import RosterLine, spelling_key

MAX_PLAYERS = 48  # R1: a tournament has 8 to 48 players
MAX_LINES = 200  # of a pasted list or a CSV file, blank lines and comments included
MAX_TEXT = 100_000  # characters of a pasted list or a CSV file: far more than 48 players
MAX_FILE_BYTES = 200_000
# A pasted line is split on the first of these it contains: "Ivanov, Ivan; crab" keeps the
# comma in the name, and a line copied from a spreadsheet comes with tabs.
SEPARATORS = (";", "\t", ",")
CSV_DELIMITERS = ";,\t"
HEADER_NAMES: dict[str, tuple[str, ...]] = {
    "name": ("name", "player", "имя", "игрок"),
    "clan": ("clan", "клан"),
    "role": ("role", "роль"),
}


def _line(number: int, cells: Sequence[str]) -> RosterLine:
    cells = [cell.strip() for cell in cells]
    return RosterLine(
        number=number,
        name=cells[0] if cells else "",
        clan=cells[1] if len(cells) > 1 else "",
        role=cells[2] if len(cells) > 2 else "",
        extra=tuple(cell for cell in cells[3:] if cell),
    )


def _skipped(cells: Sequence[str]) -> bool:
    """A blank line, or a comment (its first cell starts with ``#``)."""
    first = next((cell.strip() for cell in cells if cell.strip()), "")
    return not first or (cells[0].strip().startswith("#"))


def roster_parse(text: str) -> list[RosterLine]:
    """A pasted list: one player a line, ``name; clan; role``; clan and role may be left out.

    The cells are separated by ``;``, or else by tabs, or else by commas: whichever of these
    the line contains first in that order. Blank lines and lines starting with ``#`` are
    skipped; every line keeps its number in ``text``.
    """
    lines: list[RosterLine] = []
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        separator = next((s for s in SEPARATORS if s in raw), None)
        cells = raw.split(separator) if separator else [raw]
        if not _skipped(cells):
            lines.append(_line(number, cells))
    return lines


def _csv_delimiter(text: str) -> str:
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        first = next((line for line in text.splitlines() if line.strip()), "")
        return ";" if first.count(";") > first.count(",") else ","


def _header_columns(cells: Sequence[str]) -> dict[str, int] | None:
    """The columns a header row names (``name,clan,role`` in either language, any order)."""
    columns: dict[str, int] = {}
    for index, cell in enumerate(cells):
        key = spelling_key(cell)
        if not key:
            continue
        column = next((c for c, names in HEADER_NAMES.items() if key in names), None)
        if column is None or column in columns:
            return None
        columns[column] = index
    return columns if "name" in columns else None


def roster_parse_csv(text: str) -> list[RosterLine]:
    """A CSV file's rows (``name,clan,role``; clan and role may be empty).

    The delimiter (``;`` or ``,``) is sniffed; a first row naming the columns (``name``,
    ``clan``, ``role``, in any order, English or Russian) is a header and is skipped. Each
    row keeps the number of the file's line it starts on.
    """
    reader = csv.reader(
        io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=_csv_delimiter(text)
    )
    lines: list[RosterLine] = []
    columns: dict[str, int] | None = None
    seen_row = False
    while True:
        number = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise refusal(
                _("file: line %(line)s cannot be read as CSV: %(error)s")
                % {"line": number, "error": error},
                "csv",
            ) from None
        if reader.line_num > number:
            # A quote left open swallows the lines after it into one cell: "Quote X,lion,
            # general\nOther X,…" would be one player. No cell of a list spans two lines.
            raise refusal(
                _(
                    'file: line %(line)s: a quote (") opened on this line is not closed on it, '
                    "so it runs into the next lines"
                )
                % {"line": number},
                "csv",
            )
        if _skipped(cells or [""]):
            continue
        if not seen_row:
            seen_row = True
            columns = _header_columns(cells)
            if columns is not None:
                continue
        if columns is None:
            lines.append(_line(number, cells))
            continue
        picked = [cells[i] if i < len(cells) else "" for i in columns.values()]
        by_column = dict(zip(columns, picked, strict=True))
        others = [c for i, c in enumerate(cells) if i not in columns.values()]
        lines.append(
            _line(
                number,
                [by_column["name"], by_column.get("clan", ""), by_column.get("role", ""), *others],
            )
        )
    return lines


def roster_csv_decode(data: bytes) -> str:
    """A CSV file's text: UTF-8 (with or without its BOM), or else Windows-1251, the
    encoding a Russian spreadsheet saves CSV in."""
    if len(data) > MAX_FILE_BYTES:
        raise refusal(
            _("file: at most %(kb)s KB (a list of players is far smaller)")
            % {"kb": MAX_FILE_BYTES // 1000},
            "file_too_large",
        )
    if b"\x00" in data:
        raise refusal(_("file: this is not a text file: save the list as CSV"), "csv")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1251")
    except UnicodeDecodeError:
        raise refusal(
            _("file: the file is neither UTF-8 nor Windows-1251 text: save it as CSV UTF-8"),
            "csv",
        ) from None


def roster_lines(text: str, *, csv_format: bool = False) -> list[RosterLine]:
    """``text`` as a pasted list or (``csv_format``) a CSV file's, refused when too long."""
    # Counted before anything is parsed: a tournament has at most 48 players, and a list of
    # thousands of lines would only cost the server seconds to say so line by line.
    if len(text.splitlines()) > MAX_LINES:
        raise refusal(
            _("lines: at most %(max)s lines (a tournament has at most %(players)s players)")
            % {"max": MAX_LINES, "players": MAX_PLAYERS},
            "too_long",
        )
    if len(text) > MAX_TEXT:
        raise refusal(_("lines: at most %(max)s characters") % {"max": MAX_TEXT}, "too_long")
    return roster_parse_csv(text) if csv_format else roster_parse(text)
