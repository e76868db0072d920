"""A plain-Python adjudication of one turn: the baseline of ``engine_vs_plain.py``.

    .venv/bin/python benchmarks/plain_turn.py CASE.json [--compact]

An independent implementation of the rules the engine carries out (rules.md R4–R9, R12,
the decisions of docs/adjudication.md): it reads the case file format of
../shared/design/case-format.md, checks it as ``manage.py adjudicate`` does (the same format
errors, with the same messages), adjudicates the turn and prints the same JSON. It is
written as one would write it without an engine: dicts keyed by army and province ids, sets,
tuples, no object per army or order and no exception per rejected order. It imports nothing
from ``sl5r``: the only shared pieces are the bundled map's JSON file and, for a played
turn's committed seed, the published draw formula (docs/adjudication.md, "Verifying a turn").
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from functools import cache
from pathlib import Path
from typing import Any

ROKUGAN_JSON = Path(__file__).resolve().parents[1] / "sl5r" / "rules" / "maps" / "rokugan.json"
CLANS = ("crab", "crane", "dragon", "lion", "phoenix", "scorpion", "shadowlands", "unicorn")
CLAN_SET = frozenset(CLANS)
TOP_KEYS = frozenset(
    {
        "format",
        "description",
        "map",
        "settings",
        "turn",
        "control",
        "armies",
        "orders",
        "draws",
        "seed",
        "draw_seed",
        "commitment",
        "orders_digest",
        "expect",
    }
)
SETTINGS_KEYS = frozenset(("clan_abilities", "excluded_clans"))
ARMY_KEYS = frozenset(("id", "clan", "province", "in_battle", "destroyed_in_turn", "destroyed_by"))
ORDER_KEYS = frozenset(("army", "move", "reform", "claim", "on_swap", "late"))
MAP_KEYS = frozenset(("id", "name", "width", "height", "clans", "provinces", "borders"))
PROVINCE_KEYS = frozenset(("id", "name", "home_clan", "castle", "impassable", "x", "y"))
MAX_DEPTH = 32
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
REFORM_DELAY = {"loss": 2, "winner": 1}


class PlainInputError(ValueError):
    """A file the command would refuse (exit 2); ``str()`` is the command's message."""


def _fail(place: str, problem: str) -> PlainInputError:
    return PlainInputError(f"{place}: {problem}" if place else problem)


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _check_keys(value: object, place: str, keys: frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(place, f"must be an object, not {_show(value)}")
    for key in value:
        if key not in keys:
            raise _fail(f"{place}.{key}" if place else key, "unknown field")
    return value


def _flag(raw: dict[str, Any], key: str, place: str, default: bool) -> bool:
    value = raw.get(key, default)
    if value is not True and value is not False:
        raise _fail(f"{place}.{key}", f"must be true or false, not {_show(value)}")
    return value


def _whole(value: object, place: str, minimum: int | None = None) -> int:
    if type(value) is not int:
        raise _fail(place, f"must be a whole number, not {_show(value)}")
    if minimum is not None and value < minimum:
        raise _fail(place, f"must be at least {minimum}, not {value}")
    return value


# --- storable JSON (NaN, lone surrogates, NUL, 64-bit integers, depth) -------------------


def _bad_string(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (U+0000), which is never allowed"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"contains a lone surrogate (U+{ord(text[error.start]):04X}), which is not a character"
        )
    return None


def _unstorable(value: object, where: str, depth: int) -> str | None:
    """The first place in document order that no database or page could hold."""
    kind = type(value)
    if kind is str:
        problem = _bad_string(value)  # type: ignore[arg-type]
        return None if problem is None else (f"{where}: {problem}" if where else problem)
    if kind is dict or kind is list:
        if depth >= MAX_DEPTH:
            problem = f"nested deeper than {MAX_DEPTH} levels"
            return f"{where}: {problem}" if where else problem
        if kind is dict:
            # As the engine's walk: a dict's keys before its values, the last bad key first.
            for key in reversed(value):  # type: ignore[call-overload]
                problem = _bad_string(key)
                if problem is not None:
                    escaped = key.encode("unicode_escape").decode("ascii")
                    return f"{where}.{escaped}: {problem}" if where else f"{escaped}: {problem}"
            for key, child in value.items():  # type: ignore[attr-defined]
                found = _unstorable(child, f"{where}.{key}" if where else key, depth + 1)
                if found is not None:
                    return found
        else:
            for index, child in enumerate(value):  # type: ignore[arg-type]
                found = _unstorable(child, f"{where}[{index}]", depth + 1)
                if found is not None:
                    return found
        return None
    if kind is int:
        if not INT_MIN <= value <= INT_MAX:  # type: ignore[operator]
            bits = value.bit_length()  # type: ignore[attr-defined]
            shown = str(value) if bits < 200 else f"of {bits} bits"
            problem = f"the integer {shown} is out of range ({INT_MIN} to {INT_MAX})"
            return f"{where}: {problem}" if where else problem
    elif kind is float and not math.isfinite(value):  # type: ignore[arg-type]
        shown = "NaN" if math.isnan(value) else str(value)  # type: ignore[arg-type]
        problem = f"must be a finite number, not {shown}"
        return f"{where}: {problem}" if where else problem
    return None


# --- the map ----------------------------------------------------------------------------


def _number(value: object, place: str) -> None:
    if value is not None and (type(value) is bool or not isinstance(value, (int, float))):
        raise _fail(place, f"must be a number, not {json.dumps(value)}")


def read_map(data: Any, place: str) -> dict[str, Any]:
    """The map as plain tables: names, homes, castles, neighbour sets, in province order."""
    if not isinstance(data, dict):
        raise _fail(place, "must be an object")
    problem = _unstorable(data, place, 0)
    if problem is not None:
        raise PlainInputError(problem)
    for key in data:
        if key not in MAP_KEYS:
            raise _fail(f"{place}.{key}", "unknown field")
    raw_provinces = data.get("provinces")
    if not isinstance(raw_provinces, list) or not raw_provinces:
        raise _fail(f"{place}.provinces", "must be a non-empty list")
    clans = data.get("clans", list(CLANS))
    if not isinstance(clans, list) or any(
        not isinstance(c, str) or c not in CLAN_SET for c in clans
    ):
        raise _fail(f"{place}.clans", f"must list clans among {', '.join(CLANS)}")

    name: dict[str, str] = {}
    home: dict[str, str | None] = {}
    castle: set[str] = set()
    impassable: set[str] = set()
    for i, raw in enumerate(raw_provinces):
        where = f"{place}.provinces[{i}]"
        if not isinstance(raw, dict):
            raise _fail(where, "must be an object")
        for key in raw:
            if key not in PROVINCE_KEYS:
                raise _fail(f"{where}.{key}", "unknown field")
        pid = raw.get("id")
        if not isinstance(pid, str) or not pid.strip():
            raise _fail(f"{where}.id", "must be a non-empty string")
        if "|" in pid:
            raise _fail(f"{where}.id", f'"{pid}" may not contain "|"')
        shown = raw.get("name", pid)
        if not isinstance(shown, str):
            raise _fail(f"{where}.name", "must be a string")
        clan = raw.get("home_clan")
        if clan is not None and (not isinstance(clan, str) or clan not in CLAN_SET):
            raise _fail(f"{where}.home_clan", f"unknown clan {json.dumps(clan)}")
        has_castle = raw.get("castle")
        if not (
            has_castle is None
            or has_castle is False
            or has_castle is True
            or (isinstance(has_castle, str) and has_castle.strip())
        ):
            raise _fail(f"{where}.castle", "must be true, false, null or the castle's name")
        blocked = raw.get("impassable", False)
        if blocked is not True and blocked is not False:
            raise _fail(f"{where}.impassable", "must be true or false")
        _number(raw.get("x"), f"{where}.x")
        _number(raw.get("y"), f"{where}.y")
        if pid in name:
            raise _fail(f"{where}.id", f'"{pid}" is given twice')
        name[pid] = shown
        home[pid] = clan
        if has_castle is not None and has_castle is not False:
            castle.add(pid)
        if blocked:
            impassable.add(pid)

    raw_borders = data.get("borders", [])
    if not isinstance(raw_borders, list):
        raise _fail(f"{place}.borders", "must be a list of [a, b] pairs")
    near: dict[str, set[str]] = {pid: set() for pid in name}
    for i, pair in enumerate(raw_borders):
        where = f"{place}.borders[{i}]"
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], str)
        ):
            raise _fail(where, "must be a pair of province ids")
        a, b = pair
        for end in (a, b):
            if end not in name:
                raise _fail(where, f'unknown province "{end}"')
        if a == b:
            raise _fail(where, f'joins "{a}" to itself')
        if b in near[a]:
            raise _fail(where, f'the border "{a}"–"{b}" is given twice')
        near[a].add(b)
        near[b].add(a)

    start = next(iter(name))
    seen = {start}
    stack = [start]
    while stack:
        for n in near[stack.pop()]:
            if n not in seen:
                seen.add(n)
                stack.append(n)
    if len(seen) != len(name):
        cut_off = [pid for pid in name if pid not in seen]
        listed = ", ".join(f'"{pid}"' for pid in cut_off[:10])
        more = f" and {len(cut_off) - 10} more" if len(cut_off) > 10 else ""
        raise _fail(
            f"{place}.borders",
            f'the map is not connected: {listed}{more} cannot be reached from "{start}"',
        )
    _number(data.get("width"), f"{place}.width")
    _number(data.get("height"), f"{place}.height")
    return {"name": name, "home": home, "castle": castle, "impassable": impassable, "near": near}


@cache
def rokugan() -> dict[str, Any]:
    return read_map(json.loads(ROKUGAN_JSON.read_text("utf-8")), "rokugan")


# --- committed-seed draws (R11; the formula docs/adjudication.md publishes) -------------


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _hex64(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(key, f"must be 64 hex digits, not {_show(value)}")
    try:
        ok = len(bytes.fromhex(value)) == 32
    except ValueError:
        ok = False
    if not ok:
        raise _fail(key, f"must be 64 hex digits, not {value!r}")
    return value.lower()


class _SeedDraws:
    def __init__(self, seed: str, orders: list[tuple[Any, ...]]) -> None:
        rows = [
            {"army": a, "move": list(m), "reform": r, "claim": c, "on_swap": s, "late": late}
            for a, m, r, c, s, late in sorted(orders, key=lambda o: o[0])
        ]
        self.prefix = bytes.fromhex(seed) + hashlib.sha256(_canonical(rows)).digest()
        self.count = 0

    def choice(self, pool: tuple[str, str]) -> str:
        message = self.prefix + _canonical(["turn", self.count, list(pool)])
        self.count += 1
        return pool[int.from_bytes(hashlib.sha256(message).digest(), "big") % 2]


# --- the turn ---------------------------------------------------------------------------


def adjudicate_text(text: str, *, compact: bool = False) -> str:
    """A case file's text in, the command's output text out; ``PlainInputError`` if bad."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise _fail(
            f"line {error.lineno} column {error.colno}", f"not valid JSON: {error.msg}"
        ) from error
    out = adjudicate(data)
    return json.dumps(out, indent=None if compact else 2, ensure_ascii=False) + "\n"


def adjudicate(data: Any) -> dict[str, Any]:
    """A decoded case file in, the output document out: the whole turn in one function."""
    raw = _check_keys(data, "", TOP_KEYS)
    if raw.get("format") != 1:
        raise _fail("format", f"must be 1, not {_show(raw.get('format'))}")
    if not isinstance(raw.get("description", ""), str):
        raise _fail("description", "must be a string")
    map_ref = raw.get("map", "rokugan")
    if map_ref == "rokugan":
        board = rokugan()
    elif isinstance(map_ref, str):
        raise _fail("map", f'unknown map {_show(map_ref)}: give "rokugan" or an inline map')
    elif not isinstance(map_ref, dict):
        raise _fail("map", 'must be "rokugan" or an inline map object')
    else:
        board = read_map(map_ref, "map")
    name, home, castle, near = board["name"], board["home"], board["castle"], board["near"]

    raw_settings = raw.get("settings")
    settings = _check_keys({} if raw_settings is None else raw_settings, "settings", SETTINGS_KEYS)
    abilities = _flag(settings, "clan_abilities", "settings", True)
    excluded_list = settings.get("excluded_clans", [])
    if not isinstance(excluded_list, list):
        raise _fail("settings.excluded_clans", "must be a list of clans")
    for i, clan in enumerate(excluded_list):
        if not isinstance(clan, str) or clan not in CLAN_SET:
            raise _fail(f"settings.excluded_clans[{i}]", f"unknown clan {_show(clan)}")
    excluded = set(excluded_list)
    in_game = [c for c in CLANS if c not in excluded]
    blocked = set(board["impassable"])
    blocked.update(pid for pid, clan in home.items() if clan in excluded)

    def clan_in_game(value: object, place: str) -> str:
        if not isinstance(value, str) or value not in CLAN_SET:
            raise _fail(place, f"unknown clan {_show(value)}")
        if value in excluded:
            raise _fail(place, f'clan "{value}" is excluded from this game')
        return value

    turn = _whole(raw.get("turn", 1), "turn", minimum=1)

    # Armies: parallel lists in input order, and the id → index table.
    raw_armies = raw.get("armies", [])
    if not isinstance(raw_armies, list):
        raise _fail("armies", "must be a list")
    ids: list[str] = []
    clans: list[str] = []
    where: list[str | None] = []  # the province at the start; None: destroyed
    index_of: dict[str, int] = {}
    fighting: set[int] = set()
    reform_from: dict[int, int] = {}  # destroyed army → first turn it may reform (R9)
    for i, item in enumerate(raw_armies):
        place = f"armies[{i}]"
        row = _check_keys(item, place, ARMY_KEYS)
        aid = row.get("id")
        if not isinstance(aid, str) or not aid:
            raise _fail(f"{place}.id", "must be a non-empty string")
        if aid in index_of:
            raise _fail(f"{place}.id", f'"{aid}" is given twice')
        index_of[aid] = i
        ids.append(aid)
        clans.append(clan_in_game(row.get("clan"), f"{place}.clan"))
        province = row.get("province")
        battle = _flag(row, "in_battle", place, False)
        destroyed_in = row.get("destroyed_in_turn")
        by = row.get("destroyed_by")
        if destroyed_in is None:
            if by is not None:
                raise _fail(f"{place}.destroyed_by", "only for a destroyed army")
            if province is None:
                raise _fail(
                    f"{place}.province",
                    "required for an army on the map (a destroyed army has destroyed_in_turn)",
                )
            if not isinstance(province, str) or province not in name:
                raise _fail(f"{place}.province", f"unknown province {_show(province)}")
            if province in blocked:
                raise _fail(f"{place}.province", f'"{province}" is impassable')
            where.append(province)
            if battle:
                fighting.add(i)
            continue
        destroyed_turn = _whole(destroyed_in, f"{place}.destroyed_in_turn", minimum=1)
        if province is not None:
            raise _fail(f"{place}.province", "must be null for a destroyed army")
        if battle:
            raise _fail(f"{place}.in_battle", "a destroyed army is in no battle")
        if by is None:
            by = "loss"
        elif by != "loss" and by != "winner":
            raise _fail(f"{place}.destroyed_by", f'must be "loss" or "winner", not {_show(by)}')
        where.append(None)
        reform_from[i] = destroyed_turn + REFORM_DELAY[by]

    # Orders, checked for format: (army index, move, reform, claim, on_swap, late).
    raw_orders = raw.get("orders")
    orders: list[tuple[Any, ...]] = []
    if raw_orders is not None:
        if not isinstance(raw_orders, list):
            raise _fail("orders", "must be a list")
        ordered: set[str] = set()
        for i, item in enumerate(raw_orders):
            place = f"orders[{i}]"
            row = _check_keys(item, place, ORDER_KEYS)
            aid = row.get("army")
            if not isinstance(aid, str):
                raise _fail(f"{place}.army", "must name an army")
            if aid not in index_of:
                raise _fail(f"{place}.army", f'unknown army "{aid}"')
            if aid in ordered:
                raise _fail(f"{place}.army", f'a second order for "{aid}" (one order per army)')
            ordered.add(aid)
            if "move" in row and "reform" in row:
                raise _fail(place, "give move or reform, not both")
            move = row.get("move", [])
            if "move" in row and (
                not isinstance(move, list) or not move or not all(isinstance(p, str) for p in move)
            ):
                raise _fail(f"{place}.move", "must be a list of one or two province ids")
            reform = row.get("reform")
            if reform is not None and not isinstance(reform, str):
                raise _fail(f"{place}.reform", "must be a province id")
            on_swap = row.get("on_swap", "advance")
            if on_swap != "stay" and on_swap != "advance":
                raise _fail(
                    f"{place}.on_swap", f'must be "stay" or "advance", not {_show(on_swap)}'
                )
            claim = _flag(row, "claim", place, True)
            late = _flag(row, "late", place, False)
            orders.append((aid, tuple(move), reform, claim, on_swap, late))

    seed = raw.get("seed")
    if seed is not None:
        seed = _whole(seed, "seed")
    expect = raw.get("expect")
    if expect is not None and not isinstance(expect, dict):
        raise _fail("expect", "must be an object")

    control: dict[str, str | None] = {
        pid: (clan if clan not in excluded else None) for pid, clan in home.items()
    }
    raw_control = raw.get("control")
    if raw_control is not None:
        if not isinstance(raw_control, dict):
            raise _fail("control", "must be an object of province: clan or null")
        for pid, clan in raw_control.items():
            if pid not in name:
                raise _fail(f"control.{pid}", "unknown province")
            control[pid] = None if clan is None else clan_in_game(clan, f"control.{pid}")

    given: dict[str, str] = {}
    raw_draws = raw.get("draws")
    if raw_draws is not None:
        if not isinstance(raw_draws, dict):
            raise _fail("draws", 'must be an object such as {"a|b": "a"}')
        for key, moving in raw_draws.items():
            parts = key.split("|")
            if len(parts) != 2 or parts[0] not in name or parts[1] not in name:
                raise _fail(f"draws.{key}", "the key must be two province ids joined by |")
            a, b = parts
            if not a < b:
                raise _fail(f"draws.{key}", f'write the two provinces sorted: "{b}|{a}"')
            if moving != a and moving != b:
                raise _fail(f"draws.{key}", f"{_show(moving)} is not one of {a}, {b}")
            given[key] = moving
    draw_seed = _hex64(raw, "draw_seed")
    _hex64(raw, "commitment")
    _hex64(raw, "orders_digest")

    rng: Any
    if draw_seed is not None:
        rng, source = _SeedDraws(draw_seed, orders), "committed seed"
    elif seed is None:
        rng, source = random.SystemRandom(), "system"
    else:
        rng, source = random.Random(seed), f"seed {seed}"

    # R4, R9: check every order against the start of the turn, in the table's order.
    occupied = {p for p in where if p is not None}
    battles = {where[i] for i in fighting}
    outcome: dict[int, str] = {}  # army index → outcome of its order
    end: dict[int, str | None] = {}  # army index → where its carried-out order leaves it
    reason: dict[int, str] = {}
    no_claim: set[int] = set()
    edges: dict[tuple[str, str], list[int]] = {}
    doubles: dict[int, str] = {}  # army index → P1 of its double move
    for aid, move, reform, claim, _on_swap, late in orders:
        i = index_of[aid]
        start = where[i]
        why = None
        if late:
            why = "late: the order arrived after the deadline"
        elif i in fighting:
            why = "in_battle: the army is in a battle; its General cannot give orders"
        elif start is None and reform is None:
            why = "destroyed: the army is destroyed; it can only reform"
        elif reform is not None:
            if start is not None:
                why = "not_destroyed: only a destroyed army can reform"
            elif reform not in name:
                why = f'unknown_province: there is no province "{reform}"'
            elif reform in blocked:
                why = f"impassable: {name[reform]} is impassable"
            elif turn < reform_from[i]:
                why = f"too_early: the army may reform from turn {reform_from[i]} on"
            elif reform not in castle:
                why = f"not_castle: {name[reform]} has no castle"
            elif home[reform] != clans[i]:
                why = f"not_home: {name[reform]} is not a home province of the clan"
            elif control.get(reform) != clans[i]:
                why = f"not_controlled: the clan does not control {name[reform]}"
        elif len(move) > 2:
            why = f"too_many_steps: a move has one or two provinces, not {len(move)}"
        elif len(move) == 2 and clans[i] != "unicorn":
            why = "not_unicorn: only a Unicorn army may move two provinces"
        elif len(move) == 2 and not abilities:
            why = "abilities_off: clan abilities are off: no two-province moves"
        else:
            previous = start
            for step in move:
                if step not in name:
                    why = f'unknown_province: there is no province "{step}"'
                elif step not in near[previous]:
                    why = f"not_adjacent: {name[step]} does not border {name[previous]}"
                elif step in blocked:
                    why = f"impassable: {name[step]} is impassable"
                else:
                    previous = step
                    continue
                break
            if why is None and len(move) == 2:
                if move[1] == start:
                    why = "returns: a two-province move may not end where it started"
                elif move[0] in occupied or move[1] in occupied:
                    taken = move[0] if move[0] in occupied else move[1]
                    why = f"occupied: {name[taken]} held an army at the start of the turn"
        if why is not None:
            outcome[i], end[i], reason[i] = "rejected", start, why
            continue
        if not claim:
            no_claim.add(i)
        if reform is not None:
            outcome[i], end[i] = "reformed", reform
        elif not move:
            outcome[i], end[i] = "held", start
        elif len(move) == 1:
            outcome[i], end[i] = "moved", move[0]
            edges.setdefault((start, move[0]), []).append(i)  # type: ignore[arg-type]
        else:
            outcome[i], end[i] = "moved", move[1]
            doubles[i] = move[0]

    # R5.2, R5.3: opposite single moves across one border, of more than one clan.
    on_swap_of = {index_of[o[0]]: o[4] for o in orders}
    conflicts: list[tuple[str, str, str]] = []
    for a, b in edges:
        if a < b and (b, a) in edges:
            group = edges[(a, b)] + edges[(b, a)]
            first = clans[group[0]]
            if any(clans[i] != first for i in group):
                conflicts.append((f"{a}|{b}", a, b))
    conflicts.sort()
    draws: list[dict[str, Any]] = []
    for key, a, b in conflicts:
        from_a, from_b = edges[(a, b)], edges[(b, a)]
        draw: dict[str, Any] | None = None
        if abilities:
            scorpions_a = [i for i in from_a if clans[i] == "scorpion"]
            scorpions_b = [i for i in from_b if clans[i] == "scorpion"]
            if bool(scorpions_a) != bool(scorpions_b):
                side, scorpions = (a, scorpions_a) if scorpions_a else (b, scorpions_b)
                choices = {on_swap_of[i] for i in scorpions}
                if len(choices) == 1:
                    choice = choices.pop()
                    draw = {
                        "provinces": [a, b],
                        "moving_from": side if choice == "advance" else (b if side == a else a),
                        "method": "scorpion",
                        "armies": sorted(ids[i] for i in scorpions),
                        "on_swap": choice,
                    }
        if draw is None and key in given:
            draw = {"provinces": [a, b], "moving_from": given[key], "method": "given"}
        if draw is None:
            draw = {
                "provinces": [a, b],
                "moving_from": rng.choice((a, b)),
                "method": "random",
                "choices": [a, b],
                "source": source,
            }
        draws.append(draw)
        for i in from_b if draw["moving_from"] == a else from_a:
            outcome[i], end[i] = "blocked", where[i]

    # R5.4: a double move stops in P1 if another clan's army ends its move or reform there.
    if doubles:
        firsts = set(doubles.values())
        entering: dict[str, set[str]] = {}
        for i, to in end.items():
            if to in firsts and outcome[i] != "rejected" and to != where[i] and i not in doubles:
                entering.setdefault(to, set()).add(clans[i])
        for i, first in doubles.items():
            if entering.get(first, set()) - {clans[i]}:
                outcome[i], end[i] = "stopped", first

    # Final positions (R5, R5.5, R8) and who is where.
    armies_out: list[dict[str, Any]] = []
    present: dict[str, list[int]] = {}
    arrived: set[int] = set()
    joining: dict[str, list[str]] = {}
    for i, aid in enumerate(ids):
        start = where[i]
        to = end.get(i, start)
        battle = i in fighting
        if to is not None and to != start:
            arrived.add(i)
            battle = to in battles
            if battle:
                joining.setdefault(to, []).append(aid)
        armies_out.append(
            {
                "id": aid,
                "clan": clans[i],
                "province": to,
                "destroyed": to is None,
                "in_battle": battle,
            }
        )
        if to is not None:
            present.setdefault(to, []).append(i)

    # R7 meetings, R6 control.
    meetings: list[dict[str, Any]] = []
    for pid, here in present.items():
        if pid in battles:
            continue
        first = clans[here[0]]
        if any(clans[i] != first for i in here):
            meetings.append(
                {
                    "province": pid,
                    "armies": sorted(ids[i] for i in here),
                    "new": any(i in arrived for i in here),
                }
            )
        elif control.get(pid) != first and any(i not in no_claim for i in here):
            control[pid] = first
    meetings.sort(key=lambda m: m["province"])

    order_rows: list[dict[str, Any]] = []
    for o in orders:
        i = index_of[o[0]]
        row = {"army": o[0], "outcome": outcome[i], "province": end[i]}
        if i in reason:
            row["reason"] = reason[i]
        order_rows.append(row)

    # R12 scores, R7 Small Farms.
    homes = dict.fromkeys(in_game, 0)
    others = dict.fromkeys(in_game, 0)
    castles = dict.fromkeys(in_game, 0)
    for pid, clan in control.items():
        if clan in homes:
            if home[pid] == clan:
                homes[clan] += 1
            else:
                others[clan] += 1
            if pid in castle:
                castles[clan] += 1
    starting = dict.fromkeys(in_game, 0)
    for pid in castle:
        if home[pid] in starting:
            starting[home[pid]] += 1
    return {
        "format": 1,
        "turn": turn,
        "armies": armies_out,
        "orders": order_rows,
        "draws": draws,
        "meetings": meetings,
        "reinforcements": [
            {"province": pid, "armies": sorted(joined)} for pid, joined in sorted(joining.items())
        ],
        "control": control,
        "scores": {c: 2 * homes[c] + others[c] + castles[c] for c in in_game},
        "small_farms": {c: max(0, castles[c] - starting[c]) for c in in_game},
    }


def main(argv: list[str]) -> int:
    compact = "--compact" in argv
    files = [a for a in argv if a != "--compact"]
    if len(files) != 1:
        print("usage: plain_turn.py CASE.json [--compact]", file=sys.stderr)
        return 2
    text = sys.stdin.read() if files[0] == "-" else Path(files[0]).read_text(encoding="utf-8")
    try:
        sys.stdout.write(adjudicate_text(text, compact=compact))
    except PlainInputError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
