"""The state before the turns (R3.1): who has declared, and nobody learns another clan's
starting positions until negotiation (R1.1 as ever for the rest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.reading.state import tournament_state
from sl5r.rules.clans import CLANS
from tests.referees.conftest import Game, start_positions

pytestmark = pytest.mark.django_db


def state_for(game: Game, viewer: Viewer) -> dict[str, Any]:
    return tournament_state(tournament=game.refresh(), viewer=viewer, now=timezone.now())


def declare(game: Game, clan: str) -> None:
    codes = [p.army.code for p in game.players if p.clan == clan and p.army is not None]
    services.start_positions_declare(
        tournament_id=game.id,
        clan=clan,
        positions=start_positions(clan, codes),
        actor=game.judge_actor,
        now=timezone.now(),
    )


def army_clans(state: dict[str, Any]) -> set[str]:
    return {army["clan"] for army in state["armies"]}


@pytest.fixture
def planning32(make_game: Callable[..., Game]) -> Game:
    """32 players, clan planning: the Crab and the Crane have declared."""
    game = make_game(32, phase="planning")
    declare(game, "crab")
    declare(game, "crane")
    return game


def test_r3_1_the_judge_sees_which_clans_have_declared(planning32: Game) -> None:
    state = state_for(planning32, Viewer.judge())

    assert state["declared_clans"] == {clan: clan in ("crab", "crane") for clan in CLANS}
    assert army_clans(state) == {"crab", "crane"}


def test_r3_1_a_daimyo_learns_his_own_clans_flag_and_positions_only(planning32: Game) -> None:
    crab = state_for(planning32, Viewer.of_player(planning32.player("crab", "daimyo")))
    dragon = state_for(planning32, Viewer.of_player(planning32.player("dragon", "daimyo")))

    assert crab["declared_clans"] == {"crab": True}
    assert army_clans(crab) == {"crab"}
    assert dragon["declared_clans"] == {"dragon": False}
    assert dragon["armies"] == []


def test_r3_1_a_general_without_daimyo_sees_only_his_clans_declared_armies(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="planning")
    declare(game, "crab")
    declare(game, "lion")

    state = state_for(game, Viewer.of_player(game.player("lion")))

    assert state["viewer"]["sees_all_armies"] is True  # R1.1, once the turns run
    assert army_clans(state) == {"lion"}
    assert state["declared_clans"] == {"lion": True}


def test_r3_1_the_public_sees_no_declared_army_before_negotiation(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="planning")
    declare(game, "crab")

    state = state_for(game, Viewer.public())

    assert state["armies"] == []
    assert "declared_clans" not in state


def test_r3_3_from_negotiation_on_r1_1_alone_decides(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="negotiation")

    state = state_for(game, Viewer.of_player(game.player("lion")))

    assert army_clans(state) == set(CLANS)
    assert state["declared_clans"] == {"lion": True}


def test_r1_1_a_general_under_a_daimyo_still_sees_only_his_own_army(planning32: Game) -> None:
    general = planning32.player("crab", "general", 2)

    state = state_for(planning32, Viewer.of_player(general))

    assert [army["id"] for army in state["armies"]] == [general.army.code]  # type: ignore[union-attr]
    assert state["declared_clans"] == {"crab": True}
