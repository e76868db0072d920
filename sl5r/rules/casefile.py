"""Adjudication case files, format 1 (case-format.md, docs/adjudication.md).

Reads a JSON document into the engine's inputs, turns a ``TurnResult`` back into JSON, and
compares a result with a case's ``expect``. Every format error names its field:
``armies[3].clan: unknown clan "crabb"``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .clans import CLANS, is_clan
from .draws import SeededDraws, orders_digest, seed_bytes, seed_commitment
from .errors import CaseFormatError, MapError
from .mapgraph import GameMap, map_from_dict, rokugan_map
from .turn import (
    Army,
    DestroyedBy,
    Draw,
    Order,
    Outcome,
    RandomSource,
    Settings,
    TurnResult,
    TurnState,
    adjudicate_turn,
    draw_key,
)

FORMAT = 1
SEEDED = "committed seed"
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
SETTINGS_KEYS = frozenset({"clan_abilities", "excluded_clans"})
ARMY_KEYS = frozenset({"id", "clan", "province", "in_battle", "destroyed_in_turn", "destroyed_by"})
ORDER_KEYS = frozenset({"army", "move", "reform", "claim", "on_swap", "late"})
_LIVING_ARMY_KEYS = frozenset({"id", "clan", "province", "in_battle"})
_MOVE_ORDER_KEYS = ORDER_KEYS - {"reform"}
CLAN_SET = frozenset(CLANS)
_ABSENT: Any = object()  # a field not given (``None`` is a given JSON null)


@dataclass(frozen=True, slots=True)
class Case:
    """A case file read and checked: ready to adjudicate."""

    description: str
    state: TurnState
    orders: tuple[Order, ...]
    draws: dict[str, str]
    seed: int | None
    expect: Mapping[str, Any] | None
    map_ref: str | dict[str, Any]
    # R11: a played turn's revealed seed, the commitment published while it was secret, and
    # the digest of the orders that counted (docs/adjudication.md, "Verifying a turn").
    draw_seed: str | None = None
    commitment: str | None = None
    orders_digest: str | None = None

    def random_source(self) -> tuple[RandomSource, str]:
        if self.draw_seed is not None:
            return SeededDraws(seed=self.draw_seed, digest=orders_digest(self.orders)), SEEDED
        if self.seed is None:
            return random.SystemRandom(), "system"
        return random.Random(self.seed), f"seed {self.seed}"


def _fail(place: str, problem: str) -> CaseFormatError:
    return CaseFormatError(place, problem)


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _object(value: object, place: str, keys: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(place, f"must be an object, not {_show(value)}")
    for key in value:
        if key not in keys:
            prefix = f"{place}." if place else ""
            raise _fail(f"{prefix}{key}", "unknown field")
    return value


def _bool(obj: Mapping[str, Any], key: str, place: str, default: bool) -> bool:
    value = obj.get(key, default)
    if not isinstance(value, bool):
        raise _fail(f"{place}.{key}", f"must be true or false, not {_show(value)}")
    return value


def _int(value: object, place: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(place, f"must be a whole number, not {_show(value)}")
    if minimum is not None and value < minimum:
        raise _fail(place, f"must be at least {minimum}, not {value}")
    return value


def _map(value: object) -> GameMap:
    if value == "rokugan":
        return rokugan_map()
    if isinstance(value, str):
        raise _fail("map", f'unknown map {_show(value)}: give "rokugan" or an inline map')
    if not isinstance(value, Mapping):
        raise _fail("map", 'must be "rokugan" or an inline map object')
    try:
        return map_from_dict(value, place="map")
    except MapError as error:
        raise CaseFormatError(error.place, error.problem) from error


def _settings(value: object) -> Settings:
    raw = _object(value if value is not None else {}, "settings", SETTINGS_KEYS)
    abilities = _bool(raw, "clan_abilities", "settings", True)
    excluded = raw.get("excluded_clans", [])
    if not isinstance(excluded, list):
        raise _fail("settings.excluded_clans", "must be a list of clans")
    for i, clan in enumerate(excluded):
        if not is_clan(clan):
            raise _fail(f"settings.excluded_clans[{i}]", f"unknown clan {_show(clan)}")
    return Settings(clan_abilities=abilities, excluded_clans=frozenset(excluded))


def _clan_in_game(value: object, place: str, settings: Settings) -> str:
    if not is_clan(value):
        raise _fail(place, f"unknown clan {_show(value)}")
    assert isinstance(value, str)
    if value in settings.excluded_clans:
        raise _fail(place, f'clan "{value}" is excluded from this game')
    return value


def _armies(value: object, game_map: GameMap, settings: Settings) -> list[Army]:
    if not isinstance(value, list):
        raise _fail("armies", "must be a list")
    blocked = game_map.blocked_provinces(settings.excluded_clans)
    provinces = game_map.provinces
    excluded = settings.excluded_clans
    armies: list[Army] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        # The usual army on the map, checked without naming its place; anything else below.
        if type(item) is dict and item.keys() <= _LIVING_ARMY_KEYS:
            aid, clan, province = item.get("id"), item.get("clan"), item.get("province")
            in_battle = item.get("in_battle", False)
            if (
                type(aid) is str
                and aid
                and aid not in seen
                and type(clan) is str
                and clan in CLAN_SET
                and clan not in excluded
                and type(province) is str
                and province in provinces
                and province not in blocked
                and (in_battle is False or in_battle is True)
            ):
                seen.add(aid)
                armies.append(Army(id=aid, clan=clan, province=province, in_battle=in_battle))
                continue
        place = f"armies[{i}]"
        raw = _object(item, place, ARMY_KEYS)
        aid = raw.get("id")
        if not isinstance(aid, str) or not aid:
            raise _fail(f"{place}.id", "must be a non-empty string")
        if aid in seen:
            raise _fail(f"{place}.id", f'"{aid}" is given twice')
        seen.add(aid)
        clan = _clan_in_game(raw.get("clan"), f"{place}.clan", settings)
        province = raw.get("province")
        in_battle = _bool(raw, "in_battle", place, False)
        destroyed_in = raw.get("destroyed_in_turn")
        by = raw.get("destroyed_by")
        if destroyed_in is None:
            if by is not None:
                raise _fail(f"{place}.destroyed_by", "only for a destroyed army")
            if province is None:
                raise _fail(
                    f"{place}.province",
                    "required for an army on the map (a destroyed army has destroyed_in_turn)",
                )
            if not isinstance(province, str) or province not in game_map.provinces:
                raise _fail(f"{place}.province", f"unknown province {_show(province)}")
            if province in blocked:
                raise _fail(f"{place}.province", f'"{province}" is impassable')
            armies.append(Army(id=aid, clan=clan, province=province, in_battle=in_battle))
            continue
        turn = _int(destroyed_in, f"{place}.destroyed_in_turn", minimum=1)
        if province is not None:
            raise _fail(f"{place}.province", "must be null for a destroyed army")
        if in_battle:
            raise _fail(f"{place}.in_battle", "a destroyed army is in no battle")
        destroyed_by: DestroyedBy
        if by is None or by == "loss":
            destroyed_by = "loss"
        elif by == "winner":
            destroyed_by = "winner"
        else:
            raise _fail(f"{place}.destroyed_by", f'must be "loss" or "winner", not {_show(by)}')
        armies.append(
            Army(
                id=aid, clan=clan, province=None, destroyed_in_turn=turn, destroyed_by=destroyed_by
            )
        )
    return armies


def _strings(values: list[Any]) -> bool:
    # A loop, not all() over a generator: this runs for every order of a turn.
    for value in values:  # noqa: SIM110
        if type(value) is not str:
            return False
    return True


def _orders(value: object, armies: Sequence[Army]) -> list[Order]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail("orders", "must be a list")
    known = {a.id for a in armies}
    ordered: set[str] = set()
    orders: list[Order] = []
    for i, item in enumerate(value):
        # The usual move or hold, checked without naming its place; anything else below.
        if type(item) is dict and item.keys() <= _MOVE_ORDER_KEYS:
            get = item.get
            aid, move = get("army"), get("move", _ABSENT)
            claim, on_swap, late = get("claim", True), get("on_swap", "advance"), get("late", False)
            if (
                type(aid) is str
                and aid in known
                and aid not in ordered
                and (move is _ABSENT or (type(move) is list and move and _strings(move)))
                and (on_swap == "advance" or on_swap == "stay")
                and type(on_swap) is str
                and (claim is True or claim is False)
                and (late is False or late is True)
            ):
                ordered.add(aid)
                orders.append(
                    Order(
                        army=aid,
                        move=() if move is _ABSENT else tuple(move),
                        claim=claim,
                        on_swap="stay" if on_swap == "stay" else "advance",
                        late=late,
                    )
                )
                continue
        place = f"orders[{i}]"
        raw = _object(item, place, ORDER_KEYS)
        aid = raw.get("army")
        if not isinstance(aid, str):
            raise _fail(f"{place}.army", "must name an army")
        if aid not in known:
            raise _fail(f"{place}.army", f'unknown army "{aid}"')
        if aid in ordered:
            raise _fail(f"{place}.army", f'a second order for "{aid}" (one order per army)')
        ordered.add(aid)
        if "move" in raw and "reform" in raw:
            raise _fail(place, "give move or reform, not both")
        move = raw.get("move", [])
        if "move" in raw and (
            not isinstance(move, list) or not move or not all(isinstance(p, str) for p in move)
        ):
            raise _fail(f"{place}.move", "must be a list of one or two province ids")
        reform = raw.get("reform")
        if reform is not None and not isinstance(reform, str):
            raise _fail(f"{place}.reform", "must be a province id")
        on_swap = raw.get("on_swap", "advance")
        if on_swap not in ("stay", "advance"):
            raise _fail(f"{place}.on_swap", f'must be "stay" or "advance", not {_show(on_swap)}')
        orders.append(
            Order(
                army=aid,
                move=tuple(move),
                reform=reform,
                claim=_bool(raw, "claim", place, True),
                on_swap=on_swap,
                late=_bool(raw, "late", place, False),
            )
        )
    return orders


def _control(value: object, game_map: GameMap, settings: Settings) -> dict[str, str | None]:
    control = game_map.initial_control(settings.excluded_clans)
    if value is None:
        return control
    if not isinstance(value, Mapping):
        raise _fail("control", "must be an object of province: clan or null")
    for pid, clan in value.items():
        if pid not in game_map.provinces:
            raise _fail(f"control.{pid}", "unknown province")
        control[pid] = None if clan is None else _clan_in_game(clan, f"control.{pid}", settings)
    return control


def _draws(value: object, game_map: GameMap) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail("draws", 'must be an object such as {"a|b": "a"}')
    draws: dict[str, str] = {}
    for key, moving in value.items():
        parts = key.split("|")
        if len(parts) != 2 or any(p not in game_map.provinces for p in parts):
            raise _fail(f"draws.{key}", "the key must be two province ids joined by |")
        if draw_key(*parts) != key or parts[0] == parts[1]:
            raise _fail(f"draws.{key}", f'write the two provinces sorted: "{draw_key(*parts)}"')
        if moving not in parts:
            raise _fail(f"draws.{key}", f"{_show(moving)} is not one of {parts[0]}, {parts[1]}")
        draws[key] = moving
    return draws


def _hex64(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(key, f"must be 64 hex digits, not {_show(value)}")
    seed_bytes(value, key)
    return value.lower()


def case_from_dict(data: object) -> Case:
    """Check a decoded case file and build the engine's inputs; ``CaseFormatError`` if bad."""
    raw = _object(data, "", TOP_KEYS)
    if raw.get("format") != FORMAT:
        raise _fail("format", f"must be {FORMAT}, not {_show(raw.get('format'))}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise _fail("description", "must be a string")
    map_ref = raw.get("map", "rokugan")
    game_map = _map(map_ref)
    settings = _settings(raw.get("settings"))
    turn = _int(raw.get("turn", 1), "turn", minimum=1)
    armies = _armies(raw.get("armies", []), game_map, settings)
    orders = _orders(raw.get("orders"), armies)
    seed = raw.get("seed")
    if seed is not None:
        seed = _int(seed, "seed")
    expect = raw.get("expect")
    if expect is not None and not isinstance(expect, Mapping):
        raise _fail("expect", "must be an object")
    return Case(
        description=description,
        state=TurnState(
            game_map=game_map,
            turn=turn,
            armies=tuple(armies),
            control=_control(raw.get("control"), game_map, settings),
            settings=settings,
        ),
        orders=tuple(orders),
        draws=_draws(raw.get("draws"), game_map),
        seed=seed,
        expect=expect,
        map_ref=map_ref,
        draw_seed=_hex64(raw, "draw_seed"),
        commitment=_hex64(raw, "commitment"),
        orders_digest=_hex64(raw, "orders_digest"),
    )


def case_from_json(text: str) -> Case:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CaseFormatError(
            f"line {error.lineno} column {error.colno}", f"not valid JSON: {error.msg}"
        ) from error
    return case_from_dict(data)


def case_run(case: Case) -> TurnResult:
    rng, label = case.random_source()
    return adjudicate_turn(case.state, case.orders, draws=case.draws, rng=rng, rng_label=label)


def _draw_to_dict(draw: Draw) -> dict[str, Any]:
    out: dict[str, Any] = {
        "provinces": list(draw.provinces),
        "moving_from": draw.moving_from,
        "method": draw.method.value,
    }
    if draw.choices:
        out["choices"] = list(draw.choices)
    if draw.source is not None:
        out["source"] = draw.source
    if draw.armies:
        out["armies"] = list(draw.armies)
    if draw.on_swap is not None:
        out["on_swap"] = draw.on_swap
    return out


def result_to_dict(result: TurnResult) -> dict[str, Any]:
    """The output document of docs/adjudication.md."""
    orders: list[dict[str, Any]] = []
    for o in result.orders:
        row: dict[str, Any] = {"army": o.army, "outcome": o.outcome.value, "province": o.province}
        if o.reason is not None:
            row["reason"] = o.reason
        orders.append(row)
    return {
        "format": FORMAT,
        "turn": result.turn,
        "armies": [
            {
                "id": a.id,
                "clan": a.clan,
                "province": a.province,
                "destroyed": a.destroyed,
                "in_battle": a.in_battle,
            }
            for a in result.armies
        ],
        "orders": orders,
        "draws": [_draw_to_dict(d) for d in result.draws],
        "meetings": [
            {"province": m.province, "armies": list(m.armies), "new": m.new}
            for m in result.meetings
        ],
        "reinforcements": [
            {"province": r.province, "armies": list(r.armies)} for r in result.reinforcements
        ],
        "control": result.control,
        "scores": result.scores,
        "small_farms": result.small_farms,
    }


# The JSON text of ``result_to_dict``, written directly: ``json.dumps`` with an indent runs
# the pure-Python encoder, about a third of a 10,000-army command's time. The text is the
# same, byte for byte, as ``json.dumps(result_to_dict(result), indent=indent,
# ensure_ascii=False)`` (tests/rules/test_casefile.py and the properties check it).
_string: Callable[[str], str] = json.encoder.encode_basestring
# What opens a container whose items sit at depth d (and closes the one at d - 1), and what
# separates those items, by indent: json.dumps's newline and two spaces a level, or nothing.
_LAYOUT: Mapping[int | None, tuple[list[str], list[str]]] = {
    None: ([""] * 5, [", "] * 5),
    2: (["\n" + "  " * d for d in range(5)], [",\n" + "  " * d for d in range(5)]),
}
_CLAN_TEXTS: Mapping[str | None, str] = {None: "null", **{c: _string(c) for c in CLANS}}
_OUTCOME_TEXTS: Mapping[Outcome, str] = {o: _string(o.value) for o in Outcome}


def result_to_json(result: TurnResult, *, indent: int | None = None) -> str:
    """``json.dumps(result_to_dict(result), indent=indent, ensure_ascii=False)``, faster."""
    if indent is not None and indent != 2:
        return json.dumps(result_to_dict(result), indent=indent, ensure_ascii=False)
    nl, sep = _LAYOUT[indent]
    text = _string

    def container(items: list[str], depth: int, brackets: str) -> str:
        if not items:
            return brackets
        return brackets[0] + nl[depth] + sep[depth].join(items) + nl[depth - 1] + brackets[1]

    def row(fields: list[str]) -> str:  # an object in a top-level list: depth 2, fields 3
        return "{" + nl[3] + sep[3].join(fields) + nl[2] + "}"

    def strings(values: Sequence[str]) -> str:  # a list of strings in such a row
        return container([text(v) for v in values], 4, "[]")

    # Province ids and clans, encoded once: ``control`` names every province.
    shown: dict[str | None, str] = {pid: text(pid) for pid in result.control}
    shown.update(_CLAN_TEXTS)

    def name(value: str | None) -> str:
        found = shown.get(value)
        if found is None:
            found = shown[value] = text(value)  # type: ignore[arg-type]
        return found

    # The rows of armies and orders written whole: they are most of the document.
    o3, s3, c3 = "{" + nl[3], sep[3], nl[2] + "}"
    bools = ("false", "true")
    armies = []
    for a in result.armies:
        pid = a.province
        armies.append(
            f'{o3}"id": {text(a.id)}{s3}"clan": {shown.get(a.clan) or name(a.clan)}'
            f'{s3}"province": {shown.get(pid) or name(pid)}{s3}"destroyed": {bools[pid is None]}'
            f'{s3}"in_battle": {bools[a.in_battle]}{c3}'
        )
    outcome_texts = _OUTCOME_TEXTS
    orders = []
    for o in result.orders:
        pid = o.province
        reason = o.reason
        orders.append(
            f'{o3}"army": {text(o.army)}{s3}"outcome": {outcome_texts[o.outcome]}'
            f'{s3}"province": {shown.get(pid) or name(pid)}'
            + ("" if reason is None else f'{s3}"reason": {text(reason)}')
            + c3
        )
    draws = []
    for d in result.draws:
        fields = [
            f'"provinces": {strings(d.provinces)}',
            f'"moving_from": {name(d.moving_from)}',
            f'"method": {name(d.method.value)}',
        ]
        if d.choices:
            fields.append(f'"choices": {strings(d.choices)}')
        if d.source is not None:
            fields.append(f'"source": {text(d.source)}')
        if d.armies:
            fields.append(f'"armies": {strings(d.armies)}')
        if d.on_swap is not None:
            fields.append(f'"on_swap": {text(d.on_swap)}')
        draws.append(row(fields))
    meetings = [
        row(
            [
                f'"province": {name(m.province)}',
                f'"armies": {strings(m.armies)}',
                f'"new": {bools[m.new]}',
            ]
        )
        for m in result.meetings
    ]
    reinforcements = [
        row([f'"province": {name(r.province)}', f'"armies": {strings(r.armies)}'])
        for r in result.reinforcements
    ]
    control = [f"{name(pid)}: {name(clan)}" for pid, clan in result.control.items()]
    scores = [f"{name(clan)}: {int(n)}" for clan, n in result.scores.items()]
    farms = [f"{name(clan)}: {int(n)}" for clan, n in result.small_farms.items()]
    return container(
        [
            f'"format": {FORMAT}',
            f'"turn": {int(result.turn)}',
            f'"armies": {container(armies, 2, "[]")}',
            f'"orders": {container(orders, 2, "[]")}',
            f'"draws": {container(draws, 2, "[]")}',
            f'"meetings": {container(meetings, 2, "[]")}',
            f'"reinforcements": {container(reinforcements, 2, "[]")}',
            f'"control": {container(control, 2, "{}")}',
            f'"scores": {container(scores, 2, "{}")}',
            f'"small_farms": {container(farms, 2, "{}")}',
        ],
        1,
        "{}",
    )


def case_to_dict(
    *,
    state: TurnState,
    orders: Sequence[Order],
    draws: Mapping[str, str],
    map_ref: str | Mapping[str, Any],
    description: str = "",
    draw_seed: str | None = None,
) -> dict[str, Any]:
    """Write a turn as a case file (the inverse of ``case_from_dict``), e.g. for export.

    Draws are given explicitly so that the file reproduces the turn as it was played.
    """
    default_control = state.game_map.initial_control(state.settings.excluded_clans)
    data: dict[str, Any] = {"format": FORMAT}
    if description:
        data["description"] = description
    data["map"] = map_ref
    data["settings"] = {
        "clan_abilities": state.settings.clan_abilities,
        "excluded_clans": [c for c in CLANS if c in state.settings.excluded_clans],
    }
    data["turn"] = state.turn
    data["control"] = {
        pid: clan for pid, clan in state.control.items() if default_control.get(pid) != clan
    }
    armies: list[dict[str, Any]] = []
    for a in state.armies:
        row: dict[str, Any] = {"id": a.id, "clan": a.clan, "province": a.province}
        if a.in_battle:
            row["in_battle"] = True
        if a.province is None:
            row["destroyed_in_turn"] = a.destroyed_in_turn
            row["destroyed_by"] = a.destroyed_by or "loss"
        armies.append(row)
    data["armies"] = armies
    rows: list[dict[str, Any]] = []
    for o in orders:
        row = {"army": o.army}
        if o.move:
            row["move"] = list(o.move)
        if o.reform is not None:
            row["reform"] = o.reform
        if not o.claim:
            row["claim"] = False
        if o.on_swap != "advance":
            row["on_swap"] = o.on_swap
        if o.late:
            row["late"] = True
        rows.append(row)
    data["orders"] = rows
    data["draws"] = dict(draws)
    if draw_seed is not None:
        data["draw_seed"] = draw_seed
        data["commitment"] = seed_commitment(draw_seed)
        data["orders_digest"] = orders_digest(orders)
    return data


def case_verify(case: Case) -> list[str]:
    """Every way the case's draws do not follow from its revealed seed and orders (R11).

    Checks that the seed is the one committed to, that the orders are the ones digested at
    the deadline, and that replaying the turn with ``SeededDraws`` makes the recorded draws.
    The caller makes sure ``draw_seed`` is there.
    """
    assert case.draw_seed is not None
    problems: list[str] = []
    commitment = seed_commitment(case.draw_seed)
    if case.commitment is not None and case.commitment != commitment:
        problems.append(
            f"commitment: the case says {case.commitment}, but sha256(draw_seed) is {commitment}"
        )
    digest = orders_digest(case.orders)
    if case.orders_digest is not None and case.orders_digest != digest:
        problems.append(
            f"orders: their digest is {digest}, but the case says {case.orders_digest} "
            "(the orders are not the ones that counted at the deadline)"
        )
    replay = adjudicate_turn(
        case.state,
        case.orders,
        rng=SeededDraws(seed=case.draw_seed, digest=digest),
        rng_label=SEEDED,
    )
    made = {d.key: d.moving_from for d in replay.draws if d.method.value == "random"}
    for key in sorted(set(made) | set(case.draws)):
        recorded, drawn = case.draws.get(key), made.get(key)
        if recorded is None:
            problems.append(f"draws.{key}: the seed draws {_show(drawn)}, the case records none")
        elif drawn is None:
            problems.append(f"draws.{key}: the case records {_show(recorded)}, the seed draws none")
        elif recorded != drawn:
            problems.append(
                f"draws.{key}: the case records {_show(recorded)}, the seed draws {_show(drawn)}"
            )
    return problems


# --- comparing a result with ``expect`` -------------------------------------------------

KEYED_LISTS = {"armies": "id", "orders": "army"}


def expect_differences(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """Every place where ``actual`` does not match ``expected`` (docs/adjudication.md)."""
    problems: list[str] = []
    _compare_object(expected, actual, "", problems, top=True)
    return problems


def _compare_object(
    expected: Mapping[str, Any],
    actual: object,
    place: str,
    problems: list[str],
    *,
    top: bool = False,
) -> None:
    if not isinstance(actual, Mapping):
        problems.append(f"{place or 'output'}: expected an object, got {_show(actual)}")
        return
    for key, want in expected.items():
        here = f"{place}.{key}" if place else key
        if key not in actual:
            problems.append(f"{here}: expected {_show(want)}, but the output has no such field")
            continue
        got = actual[key]
        if top and key in KEYED_LISTS and isinstance(want, list):
            _compare_keyed(want, got, here, KEYED_LISTS[key], problems)
        elif key == "reason" and isinstance(want, str) and isinstance(got, str):
            if want not in (got, got.split(":", 1)[0]):
                problems.append(f"{here}: expected {_show(want)}, got {_show(got)}")
        else:
            _compare_value(want, got, here, problems)


def _compare_keyed(
    expected: list[Any], actual: object, place: str, key: str, problems: list[str]
) -> None:
    if not isinstance(actual, list):
        problems.append(f"{place}: expected a list, got {_show(actual)}")
        return
    index = {row.get(key): row for row in actual if isinstance(row, Mapping)}
    for want in expected:
        if not isinstance(want, Mapping) or key not in want:
            problems.append(f"{place}: each expected entry needs {_show(key)}")
            continue
        got = index.get(want[key])
        if got is None:
            problems.append(f"{place}: no entry with {key} {_show(want[key])}")
            continue
        _compare_object(want, got, f"{place}[{want[key]}]", problems)


def _canonical(value: Any) -> Any:
    """A form in which lists compare as sets, at every depth."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(sorted((_canonical(v) for v in value), key=repr))
    return value


def _compare_list(expected: list[Any], actual: object, place: str, problems: list[str]) -> None:
    """Whole lists in any order; an expected object matches an output object it is part of."""
    mismatch = f"{place}: expected {_show(expected)}, got {_show(actual)}"
    if not isinstance(actual, list) or len(actual) != len(expected):
        problems.append(mismatch)
        return
    if not any(isinstance(e, Mapping) for e in expected):
        if _canonical(expected) != _canonical(actual):
            problems.append(mismatch)
        return
    unused = list(actual)
    for want in expected:
        for i, got in enumerate(unused):
            trial: list[str] = []
            _compare_value(want, got, place, trial)
            if not trial:
                del unused[i]
                break
        else:
            problems.append(mismatch)
            return


def _compare_value(expected: Any, actual: Any, place: str, problems: list[str]) -> None:
    if isinstance(expected, Mapping):
        _compare_object(expected, actual, place, problems)
    elif isinstance(expected, list):
        _compare_list(expected, actual, place, problems)
    elif expected != actual or type(expected) is not type(actual):
        problems.append(f"{place}: expected {_show(expected)}, got {_show(actual)}")
