"""Seeded generators of maps, armies and orders for the adjudication benchmark.

``generate_map(n, seed=…)`` returns a connected, planar map of ``n`` provinces as the dict
``sl5r.rules.map_from_dict`` reads (R2): provinces on a jittered grid, each bordering its
grid neighbours and one diagonal per cell (a triangulation, so any subset stays planar); a
random spanning tree of that grid keeps the map connected and random extra borders bring it
to about 2.2 borders per province (average degree 4.4, as the bundled map's 85 borders for
39 provinces). The eight clans get a region each (a 4 × 2 split of the grid), most provinces
of a region are its clan's home provinces, about 20 % of those have a castle (at least one per
clan, so that armies can reform), and a few unaligned provinces are impassable.

``spread_armies`` and ``armies_near_homes`` place armies, and ``random_orders`` gives them
the orders of a busy turn: most move to a random neighbour, some hold, some give no order, a
few swap with an enemy next door, Unicorns try double moves, some say ``claim: false``,
Scorpions choose ``on_swap``, destroyed armies reform, a few orders are late. The same
arguments and seed always give the same map and turn.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from sl5r.rules import Army, GameMap, Order, Settings, TurnState
from sl5r.rules.clans import CLANS, SCORPION, UNICORN

BORDERS_PER_PROVINCE = 2.2
HOME_SHARE = 0.85
CASTLE_SHARE = 0.2
IMPASSABLE_SHARE = 0.05  # of the unaligned provinces
CELL = 100.0  # drawing distance between grid neighbours
MIN_PROVINCES = 16  # a 4 × 4 grid: every clan's region has provinces


class _DisjointSets:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[ra] = rb
        return True


def province_id(index: int) -> str:
    return f"p{index}"


def generate_map(
    provinces: int,
    *,
    seed: int = 0,
    borders_per_province: float = BORDERS_PER_PROVINCE,
    castle_share: float = CASTLE_SHARE,
) -> dict[str, Any]:
    """A connected planar map of ``provinces`` provinces, as ``map_from_dict`` reads it."""
    if provinces < MIN_PROVINCES:
        raise ValueError(f"a generated map has at least {MIN_PROVINCES} provinces")
    rng = random.Random(seed)
    cols = math.ceil(math.sqrt(provinces))
    rows = math.ceil(provinces / cols)

    def index(col: int, row: int) -> int | None:
        i = row * cols + col
        return i if 0 <= col < cols and 0 <= row < rows and i < provinces else None

    # Candidate borders: right, down and one diagonal per grid cell (a triangulation).
    candidates: list[tuple[int, int]] = []
    for row in range(rows):
        for col in range(cols):
            here = index(col, row)
            if here is None:
                continue
            right, down, corner = index(col + 1, row), index(col, row + 1), index(col + 1, row + 1)
            candidates.extend((here, other) for other in (right, down) if other is not None)
            if right is not None and down is not None and corner is not None:
                candidates.append((here, corner) if rng.random() < 0.5 else (right, down))
    rng.shuffle(candidates)

    # A random spanning tree (Kruskal over shuffled candidates), then extra borders.
    sets = _DisjointSets(provinces)
    chosen: list[tuple[int, int]] = []
    spare: list[tuple[int, int]] = []
    for a, b in candidates:
        (chosen if sets.union(a, b) else spare).append((a, b))
    wanted = max(provinces - 1, round(borders_per_province * provinces))
    chosen.extend(spare[: max(0, wanted - len(chosen))])

    # Clans by region: a 4 × 2 split of the grid.
    def region_clan(i: int) -> str:
        col, row = i % cols, i // cols
        return CLANS[min(3, col * 4 // cols) + 4 * min(1, row * 2 // rows)]

    homes: dict[str, list[int]] = {clan: [] for clan in CLANS}
    home_clan: list[str | None] = []
    for i in range(provinces):
        clan = region_clan(i) if rng.random() < HOME_SHARE else None
        home_clan.append(clan)
        if clan is not None:
            homes[clan].append(i)
    castles: set[int] = set()
    for clan, ids in homes.items():
        if not ids:  # a small map: give the clan one home province
            ids.append(next(i for i in range(provinces) if region_clan(i) == clan))
            home_clan[ids[0]] = clan
        count = max(1, round(castle_share * len(ids)))
        castles.update(rng.sample(ids, min(count, len(ids))))

    rows_out: list[dict[str, Any]] = []
    for i in range(provinces):
        col, row = i % cols, i // cols
        row_out: dict[str, Any] = {
            "id": province_id(i),
            "name": f"Province {i}",
            "home_clan": home_clan[i],
            "castle": i in castles,
            "x": round((col + 0.5 + rng.uniform(-0.3, 0.3)) * CELL, 1),
            "y": round((row + 0.5 + rng.uniform(-0.3, 0.3)) * CELL, 1),
        }
        if home_clan[i] is None and i not in castles and rng.random() < IMPASSABLE_SHARE:
            row_out["impassable"] = True
        rows_out.append(row_out)
    return {
        "id": f"generated-{provinces}-{seed}",
        "name": f"Generated map, {provinces} provinces, seed {seed}",
        "width": cols * CELL,
        "height": rows * CELL,
        "provinces": rows_out,
        "borders": [[province_id(a), province_id(b)] for a, b in chosen],
    }


def _passable(game_map: GameMap, settings: Settings) -> list[str]:
    blocked = game_map.blocked_provinces(settings.excluded_clans)
    return [pid for pid in game_map.provinces if pid not in blocked]


def spread_armies(
    game_map: GameMap,
    count: int,
    *,
    seed: int = 0,
    turn: int = 5,
    in_battle_share: float = 0.02,
    destroyed_share: float = 0.03,
) -> list[Army]:
    """``count`` armies, clans in turn, most in their clan's home provinces, some anywhere;
    a few destroyed (in the last turns) and a few in the battles of some provinces."""
    rng = random.Random(seed)
    passable = _passable(game_map, Settings())
    passable_set = set(passable)
    homes = {
        clan: [p for p in game_map.home_provinces.get(clan, ()) if p in passable_set] or passable
        for clan in CLANS
    }
    armies: list[Army] = []
    for i in range(count):
        clan = CLANS[i % len(CLANS)]
        aid = f"{clan}-{i // len(CLANS) + 1}"
        roll = rng.random()
        if roll < destroyed_share:
            armies.append(
                Army(
                    id=aid,
                    clan=clan,
                    province=None,
                    destroyed_in_turn=turn - rng.choice((1, 2)),
                    destroyed_by=rng.choice(("loss", "winner")),
                )
            )
            continue
        province = rng.choice(homes[clan]) if rng.random() < 0.8 else rng.choice(passable)
        in_battle = roll < destroyed_share + in_battle_share
        armies.append(Army(id=aid, clan=clan, province=province, in_battle=in_battle))
    return armies


def armies_near_homes(game_map: GameMap, per_clan: int, *, seed: int = 0) -> list[Army]:
    """``per_clan`` armies of every clan: one in each home province, castles first (R3.2),
    the rest in passable provinces next to the clan's homes."""
    rng = random.Random(seed)
    passable = set(_passable(game_map, Settings()))
    armies: list[Army] = []
    for clan in CLANS:
        homes = list(game_map.home_provinces.get(clan, ()))
        homes.sort(key=lambda pid: pid not in game_map.castles)
        near = sorted(
            {n for pid in homes for n in game_map.neighbours[pid] if n in passable} - set(homes)
        )
        rng.shuffle(near)
        places = (homes + near)[:per_clan]
        while len(places) < per_clan:
            places.append(rng.choice(homes))
        armies.extend(
            Army(id=f"{clan}-{i + 1}", clan=clan, province=pid) for i, pid in enumerate(places)
        )
    return armies


def random_orders(
    game_map: GameMap,
    armies: Sequence[Army],
    *,
    seed: int = 0,
    hold_share: float = 0.1,
    silent_share: float = 0.05,
    swap_share: float = 0.03,
    claim_false_share: float = 0.05,
    late_share: float = 0.01,
) -> list[Order]:
    """A busy turn's orders, one per army at most, in the armies' order."""
    rng = random.Random(seed)
    neighbours = game_map.neighbours
    castles = game_map.castles
    by_province: dict[str, list[Army]] = {}
    for a in armies:
        if a.province is not None:
            by_province.setdefault(a.province, []).append(a)

    moves: dict[str, tuple[str, ...] | None] = {}
    reforms: dict[str, str] = {}
    for a in armies:
        if a.province is None:
            homes = [p for p in game_map.home_provinces.get(a.clan, ()) if p in castles]
            if homes:
                reforms[a.id] = rng.choice(homes)
            continue
        if a.in_battle:
            continue  # its General cannot give orders (R4); the site would not send one
        roll = rng.random()
        near = sorted(neighbours[a.province])
        if roll < silent_share or not near:
            moves[a.id] = None
        elif roll < silent_share + hold_share:
            moves[a.id] = ()
        elif a.clan == UNICORN and rng.random() < 0.5:
            first = rng.choice(near)
            onward = sorted(neighbours[first] - {a.province}) or [first]
            moves[a.id] = (first, rng.choice(onward))
        else:
            moves[a.id] = (rng.choice(near),)

    # A few swaps: an army and an enemy next door each move into the other's province.
    living = [a for a in armies if a.province is not None and a.id in moves]
    for a in rng.sample(living, round(swap_share * len(living))):
        assert a.province is not None
        for n in sorted(neighbours[a.province]):
            enemies = [b for b in by_province.get(n, ()) if b.clan != a.clan and b.id in moves]
            if enemies:
                b = rng.choice(enemies)
                moves[a.id], moves[b.id] = (n,), (a.province,)
                break

    orders: list[Order] = []
    for a in armies:
        if a.id in reforms:
            orders.append(Order(army=a.id, reform=reforms[a.id]))
            continue
        move = moves.get(a.id)
        if move is None:
            continue
        orders.append(
            Order(
                army=a.id,
                move=move,
                claim=rng.random() >= claim_false_share,
                on_swap=rng.choice(("advance", "stay")) if a.clan == SCORPION else "advance",
                late=rng.random() < late_share,
            )
        )
    return orders


def turn_state(game_map: GameMap, armies: Sequence[Army], *, turn: int = 5) -> TurnState:
    """The start of a turn with the initial control (R3.4) and the default settings."""
    return TurnState(
        game_map=game_map,
        turn=turn,
        armies=tuple(armies),
        control=game_map.initial_control(),
        settings=Settings(),
    )
