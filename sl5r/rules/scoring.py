"""End-of-game scoring (R12) and Small Farms (R7): pure functions of the control map."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .mapgraph import GameMap


@dataclass(frozen=True, slots=True)
class ClanScore:
    """One clan's points, broken down as the final standings show them (R12)."""

    clan: str
    home_provinces: int
    other_provinces: int
    castles: int

    @property
    def total(self) -> int:
        return 2 * self.home_provinces + self.other_provinces + self.castles


def score_breakdown(
    game_map: GameMap, control: Mapping[str, str | None], clans: Iterable[str]
) -> dict[str, ClanScore]:
    """R12: 2 per home province, 1 per other province, +1 per castle, for each clan."""
    homes = dict.fromkeys(clans, 0)
    others = dict.fromkeys(homes, 0)
    castles = dict.fromkeys(homes, 0)
    provinces = game_map.provinces
    for pid, clan in control.items():
        if clan is None or clan not in homes:
            continue
        province = provinces[pid]
        if province.home_clan == clan:
            homes[clan] += 1
        else:
            others[clan] += 1
        if province.castle is not None:
            castles[clan] += 1
    return {
        clan: ClanScore(
            clan=clan,
            home_provinces=homes[clan],
            other_provinces=others[clan],
            castles=castles[clan],
        )
        for clan in homes
    }


def clan_scores(
    game_map: GameMap, control: Mapping[str, str | None], clans: Iterable[str]
) -> dict[str, int]:
    return {clan: s.total for clan, s in score_breakdown(game_map, control, clans).items()}


def castles_controlled(
    game_map: GameMap, control: Mapping[str, str | None], clans: Iterable[str]
) -> dict[str, int]:
    counts = dict.fromkeys(clans, 0)
    for pid in game_map.castles:
        clan = control.get(pid)
        if clan in counts:
            counts[clan] += 1
    return counts


def small_farms(
    game_map: GameMap, control: Mapping[str, str | None], clans: Iterable[str]
) -> dict[str, int]:
    """R7: one Small Farm per castle beyond the clan's starting count, never below 0.

    The starting count is the clan's castle home provinces: 2, and 3 for the Crane, on the
    bundled map (R2); an imported map brings its own.
    """
    return {
        clan: max(0, held - game_map.starting_castles(clan))
        for clan, held in castles_controlled(game_map, control, clans).items()
    }
