"""What a battle table starts with, from the strategic map (R7, R10).

For a province, the armies fighting in it and the control when the battle starts, this
computes each participant's Force modifier for all his Personalities, his starting family
honor bonus, his starting Fate hand, his Small Farms, and whether a Scorpion chooses the
seating. Card-game bookkeeping during the battle (R13) is not the map's business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .clans import CRAB, CRANE, DRAGON, LION, PHOENIX, SCORPION, SHADOWLANDS
from .mapgraph import GameMap
from .scoring import small_farms

BASE_HANDS = (5, 6)  # older editions, Emperor Edition (seed 000 step F)
CRANE_HONOR_BONUS = 3
PHOENIX_HAND_PENALTY = 2


@dataclass(frozen=True, slots=True)
class Participant:
    army: str
    clan: str


@dataclass(frozen=True, slots=True)
class ParticipantSetup:
    army: str
    clan: str
    force_modifier: int
    honor_bonus: int
    hand_size: int
    small_farms: int
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BattleSetup:
    province: str
    participants: tuple[ParticipantSetup, ...]
    seating_chosen_by: tuple[str, ...]  # the Scorpion armies that choose, R10


def battle_modifiers(
    *,
    game_map: GameMap,
    province: str,
    participants: Sequence[Participant],
    control: Mapping[str, str | None],
    clan_abilities: bool = True,
    base_hand: int = 5,
) -> BattleSetup:
    """R7 Small Farms and the R10 clan-ability modifiers for one battle.

    ``control`` is the control when the battle starts. A clan's ability works only when
    that clan fights in the battle (docs/adjudication.md).
    """
    if base_hand not in BASE_HANDS:
        raise ValueError(f"the base starting hand is 5 or 6, not {base_hand}")
    owner = control.get(province)
    castle = province in game_map.castles
    clans_here = {p.clan for p in participants}
    farms = small_farms(game_map, control, clans_here)
    setups: list[ParticipantSetup] = []
    for p in participants:
        force = 0
        honor = 0
        hand = base_hand
        notes: list[str] = []
        if clan_abilities:
            if p.clan == CRAB and owner == CRAB:
                force += 1
                notes.append("Crab: +1 Force in a Crab province")
            if p.clan == LION and castle and owner is not None and owner != LION:
                force += 1
                notes.append("Lion: +1 Force in an enemy castle")
            if p.clan != SHADOWLANDS and SHADOWLANDS in clans_here and owner == SHADOWLANDS:
                force -= 1
                notes.append("Shadowlands: −1 Force in a Shadowlands province")
            if p.clan == CRANE and owner == CRANE:
                honor += CRANE_HONOR_BONUS
                notes.append("Crane: +3 family honor in a Crane province")
            if p.clan == DRAGON:
                hand += 1
                notes.append("Dragon: one Fate card more")
            if p.clan != PHOENIX and PHOENIX in clans_here and owner == PHOENIX:
                hand -= PHOENIX_HAND_PENALTY
                notes.append("Phoenix: two Fate cards fewer in a Phoenix province")
        setups.append(
            ParticipantSetup(
                army=p.army,
                clan=p.clan,
                force_modifier=force,
                honor_bonus=honor,
                hand_size=hand,
                small_farms=farms[p.clan],
                notes=tuple(notes),
            )
        )
    scorpions: tuple[str, ...] = ()
    if clan_abilities and len(participants) >= 3:
        scorpions = tuple(sorted(p.army for p in participants if p.clan == SCORPION))
    return BattleSetup(province=province, participants=tuple(setups), seating_chosen_by=scorpions)
