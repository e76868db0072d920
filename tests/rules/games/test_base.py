"""What the battle games share: the registry, entrants and casualties (R7, R8, R9)."""

from __future__ import annotations

import pytest

from sl5r.rules.errors import RulesInputError
from sl5r.rules.games import (
    GAMES,
    Casualty,
    Entrant,
    GameError,
    TableOutcome,
    battle_casualties,
    game_for,
)
from sl5r.rules.turn import REFORM_DELAY

from .helpers import L5R, Scripted


def test_the_games_are_l5r_and_bushido() -> None:
    assert set(GAMES) == {"l5r", "bushido"}
    assert game_for("l5r").title == "Legend of the Five Rings"
    assert game_for("bushido").name == "bushido"


def test_an_unknown_game_is_a_game_error() -> None:
    with pytest.raises(GameError, match='game: unknown battle game "chess"'):
        game_for("chess")


def test_a_game_error_is_a_rules_input_error() -> None:
    assert issubclass(GameError, RulesInputError)


@pytest.mark.parametrize(
    ("entrants", "message"),
    [
        ([], "no army"),
        ([Entrant("crab-1", "crab")], "two clans"),
        ([Entrant("crab-1", "crab"), Entrant("crab-2", "crab")], "two clans"),
        ([Entrant("crab-1", "crab"), Entrant("crab-1", "lion")], "already at the table"),
        ([Entrant("crab-1", "crab"), Entrant("x-1", "ronin")], 'unknown clan "ronin"'),
        ([Entrant("crab-1", "crab"), Entrant("judge", "lion")], "not an army code"),
        ([Entrant("crab-1", "crab"), Entrant("lion-1", "lion", hand_size=-1)], "hand_size"),
        ([Entrant("crab-1", "crab"), "lion-1"], "not an Entrant"),
    ],
)
def test_r7_a_table_needs_two_clans_of_well_formed_entrants(
    entrants: list[Entrant], message: str
) -> None:
    for game in GAMES.values():
        with pytest.raises(GameError, match=message):
            game.open(entrants=entrants, options={}, rng=Scripted())


def test_unknown_options_are_refused() -> None:
    entrants = [Entrant("crab-1", "crab"), Entrant("lion-1", "lion")]
    with pytest.raises(GameError, match='unknown option "turns"'):
        L5R.open(entrants=entrants, options={"turns": 4}, rng=Scripted())


ARMIES = ["crab-1", "crab-2", "lion-1", "crane-1", "dragon-1"]


def test_r8_r9_a_win_destroys_losers_as_losers_and_the_others_by_the_winners_choice() -> None:
    outcome = TableOutcome(kind="win", winner="lion-1", losers=("crane-1",), reason="honor")
    result = battle_casualties(armies=ARMIES, outcome=outcome, survivors=["crab-2"], turn=5)
    assert result == (
        Casualty("crab-1", "winner", 5 + REFORM_DELAY["winner"]),
        Casualty("crane-1", "loss", 7),
        Casualty("dragon-1", "winner", 6),
    )


def test_r7_the_winners_clan_mates_always_survive() -> None:
    outcome = TableOutcome(kind="win", winner="crab-1", losers=(), reason="honor")
    result = battle_casualties(armies=ARMIES, outcome=outcome, survivors=[], turn=3)
    assert [c.army for c in result] == ["lion-1", "crane-1", "dragon-1"]


def test_r7_clans_may_be_given_when_codes_do_not_name_them() -> None:
    outcome = TableOutcome(kind="win", winner="a", losers=(), reason="honor")
    clans = {"a": "crab", "b": "crab", "c": "lion"}
    result = battle_casualties(
        armies=["a", "b", "c"], outcome=outcome, survivors=[], turn=1, clans=clans
    )
    assert result == (Casualty("c", "winner", 2),)


def test_r8_a_truce_destroys_only_those_who_lost_during_the_battle() -> None:
    outcome = TableOutcome(kind="truce", winner=None, losers=("lion-1",), reason="truce")
    result = battle_casualties(armies=ARMIES, outcome=outcome, survivors=[], turn=4)
    assert result == (Casualty("lion-1", "loss", 6),)


def test_r8_a_loser_stays_destroyed_even_of_the_winners_clan() -> None:
    outcome = TableOutcome(kind="win", winner="crab-1", losers=("crab-2",), reason="honor")
    result = battle_casualties(armies=ARMIES, outcome=outcome, survivors=ARMIES[2:], turn=2)
    assert result == (Casualty("crab-2", "loss", 4),)


@pytest.mark.parametrize(
    ("outcome", "survivors", "message"),
    [
        (TableOutcome("win", "lion-1", ("crane-1",), "honor"), ["crane-1"], "crane-1 lost"),
        (TableOutcome("win", "lion-1", (), "honor"), ["unicorn-1"], "not at the table"),
        (TableOutcome("win", "unicorn-1", (), "honor"), [], "winner"),
        (TableOutcome("win", None, (), "honor"), [], "winner"),
        (TableOutcome("win", "lion-1", ("lion-1",), "honor"), [], "both win and lose"),
        (TableOutcome("truce", None, ("phoenix-1",), "truce"), [], "outcome.losers"),
        (TableOutcome("truce", None, ("lion-1",), "truce"), ["lion-1"], "lion-1 lost"),
    ],
)
def test_r8_invalid_survivors_or_outcomes_are_game_errors(
    outcome: TableOutcome, survivors: list[str], message: str
) -> None:
    with pytest.raises(GameError, match=message):
        battle_casualties(armies=ARMIES, outcome=outcome, survivors=survivors, turn=1)


def test_r9_the_turn_must_be_a_turn_number() -> None:
    outcome = TableOutcome("truce", None, (), "truce")
    with pytest.raises(GameError, match="turn"):
        battle_casualties(armies=ARMIES, outcome=outcome, survivors=[], turn=0)
