"""The battle tables' side of the strategic map (R4, R6-R10): what a table reads from the
board and what its result changes there.

The tables themselves (meetings, votes, play, consent, corrections) are
``battles.services``; this module is the only one of ``battles`` that reads or changes the
board, through ``strategic_map.board.Board`` and the board services of
``strategic_map.services`` (which check provinces and clans).

Reads:

- ``campaign_turn_number``: the turn being played (the last one when none is open);
- ``campaign_armies``: army rows by code; ``province_armies``: those standing in a province;
- ``campaign_control``, ``province_controller``: who controls the provinces;
- ``battle_setup``: a battle's R7 Small Farms and R10 modifiers from the map and a control.

Writes, inside the caller's transaction with the tournament (and so its campaign) locked,
each saving the board:

- ``board_battle_enter``: the armies of a starting battle are ``in_battle`` (R4);
- ``board_battle_result``: a result's casualties leave the board (R8, R9), the armies left
  are freed and control follows (R6);
- ``board_casualties_restore``: a correction puts a result's casualties back first.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from referees.kernel.core import refusal
from sl5r.rules.battle import BattleSetup, Participant, battle_modifiers
from sl5r.rules.games import Casualty, GameError, TableOutcome, battle_casualties
from strategic_map.board import Board
from strategic_map.models import Army, Campaign, Turn
from strategic_map.selectors import campaign_game_map
from strategic_map.services import board_place, board_set_control

# --- Reads -----------------------------------------------------------------------------------


def campaign_turn_number(campaign: Campaign) -> int:
    """The open turn's number; the last one played when none is open (1 before any)."""
    numbers = (
        Turn.objects.filter(campaign=campaign)
        .exclude(status=Turn.Status.UNDONE)
        .order_by("-number")
        .values_list("number", "status")
    )
    first = numbers.first()
    if first is None:
        return 1
    number, status = first
    return int(number) if status == Turn.Status.OPEN else int(number) + 1


def campaign_armies(campaign: Campaign, codes: Iterable[str] | None = None) -> dict[str, Army]:
    """The campaign's army rows by code: all of them, or those of ``codes`` that exist."""
    rows = Army.objects.filter(campaign=campaign)
    if codes is not None:
        rows = rows.filter(code__in=list(codes))
    return {a.code: a for a in rows}


def province_armies(campaign: Campaign, province: str) -> dict[str, Army]:
    """The armies standing in ``province`` now, by code in code order (destroyed ones stand
    nowhere)."""
    codes = Board.of(campaign).standing_in(province)
    return dict(sorted(campaign_armies(campaign, codes).items()))


def campaign_control(campaign: Campaign) -> dict[str, str | None]:
    """Who controls each province now (a copy, to keep with a battle's set-up)."""
    return Board.of(campaign).control()


def province_controller(campaign: Campaign, province: str) -> str | None:
    """The clan controlling ``province`` now; ``None`` when nobody does."""
    return Board.of(campaign).control_of(province)


def battle_setup(
    campaign: Campaign,
    *,
    province: str,
    armies: Mapping[str, Army],
    control: Mapping[str, Any],
) -> BattleSetup:
    """R7 Small Farms and R10 modifiers of ``armies`` fighting in ``province``, with
    ``control`` as it was when the battle started."""
    return battle_modifiers(
        game_map=campaign_game_map(campaign),
        province=province,
        participants=[Participant(army=code, clan=a.clan) for code, a in armies.items()],
        control=control,
        clan_abilities=campaign.clan_abilities,
        base_hand=campaign.base_hand,
    )


# --- Writes ----------------------------------------------------------------------------------


def board_battle_enter(*, campaign: Campaign, codes: Iterable[str]) -> None:
    """The armies ``codes`` are at a battle table: their Generals give no orders (R4)."""
    board = Board.of(campaign)
    for code in codes:
        board.set_in_battle(code, True)
    board.save()


def board_battle_result(
    *,
    campaign: Campaign,
    province: str,
    outcome: TableOutcome,
    armies: Mapping[str, Army],
    survivors: Collection[str],
    turn: int,
    control_before: tuple[str | None] | None = None,
) -> tuple[Casualty, ...]:
    """A battle's result on the board: destroy its casualties in ``turn``, free the armies
    left in ``province`` and update its control (R6, R8, R9); the casualties.

    ``armies`` fought the battle; ``survivors`` are those the result spares. When the
    armies left in the province are all of one clan, that clan takes it; otherwise control
    stays as it is, or, for a correction (``control_before`` given), goes back to what it
    was before the corrected result changed it. Refused (``validation``) when the result
    and the survivors do not fit together.
    """
    try:
        casualties = battle_casualties(
            armies=sorted(armies), outcome=outcome, survivors=survivors, turn=turn
        )
    except GameError as error:
        raise refusal(str(error), "validation") from error
    for casualty in casualties:
        board_place(
            campaign=campaign,
            army=armies[casualty.army],
            province=None,
            destroyed_in_turn=turn,
            destroyed_by=casualty.destroyed_by,
        )
    board = Board.of(campaign)
    left = province_armies(campaign, province)
    for code in left:
        board.set_in_battle(code, False)
    clans = {a.clan for a in left.values()}
    if len(clans) == 1:
        board_set_control(campaign=campaign, province=province, clan=clans.pop())
    elif control_before is not None:
        board_set_control(campaign=campaign, province=province, clan=control_before[0])
    board.save()
    return casualties


def board_casualties_restore(
    *,
    campaign: Campaign,
    province: str,
    armies: Mapping[str, Army],
    casualties: Iterable[Mapping[str, Any]],
    turn: int,
) -> tuple[list[str], list[str]]:
    """A correction takes back a result's ``casualties`` (as stored on the battle): each
    army of ``armies`` still off the board since ``turn`` stands in ``province`` again.

    Returns the codes restored and those kept where they are: an army that has reformed,
    or been moved by a judge, since the battle is not brought back.
    """
    board = Board.of(campaign)
    restored: list[str] = []
    kept_off: list[str] = []
    for casualty in casualties:
        code = casualty["army"]
        spot = board.spot(code)
        if (
            code in armies
            and spot is not None
            and spot.destroyed
            and spot.destroyed_in_turn == turn
        ):
            board_place(campaign=campaign, army=armies[code], province=province)
            restored.append(code)
        else:
            kept_off.append(code)  # reformed or moved since: left where it is
    board.save()
    return restored, kept_off
