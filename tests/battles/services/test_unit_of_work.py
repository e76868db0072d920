"""One action at a battle table is one unit of work: one version, one event, known queries.

As for the referees' operations (tests/referees/kernel/test_unit_of_work.py): a play at a table
grows ``Campaign.version`` by exactly one and, after the commit, sends exactly one event to
the tournament's group and one to its public group (the tables are public), carrying that
version. Measured from outside only (tests/event_capture.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from battles import services as battle_services
from battles.models import Battle
from tests.battles.conftest import fight, general, meet
from tests.event_capture import IN_MEMORY_LAYERS, OnCommitCapture, effects_of
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

# Today's count, pinned as an upper bound: a change that adds a query must say why here. It
# includes the SAVEPOINT and RELEASE of the action's atomic block inside the test's
# transaction (tests/event_capture.py). The action: find the table's tournament and lock it,
# read the table, its seats and the current turn, store the game's new state and its log
# line, bump the version.
ACTION_QUERIES = 10


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    """Events go to a fresh in-memory layer, where the test listens (Redis or not)."""
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYERS


def a_battle_being_fought(game: Game) -> Battle:
    """Lion and Unicorn meet in lion-akodo, vote for battle and begin the game (R7, R13)."""
    battle = fight(game, meet(game))
    assert battle.status == "battle"
    return battle


def one_play(game: Game, battle: Battle) -> Callable[[], object]:
    """The Lion's General records that he lost one of his provinces (his own count)."""
    lion = general(game, "lion-1")  # read before, so that the count is the action's own

    def play() -> object:
        return battle_services.battle_act(
            battle_id=battle.pk,
            action={"type": "province", "army": "lion-1", "delta": -1},
            actor=lion,
            now=timezone.now(),
        )

    return play


def test_one_battle_action_bumps_the_version_once_and_sends_one_event(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    battle = a_battle_being_fought(game16)
    before = battle.state

    effects = effects_of(
        tournament_id=game16.id,
        operation=one_play(game16, battle),
        on_commit=django_capture_on_commit_callbacks,
    )

    battle.refresh_from_db()
    assert battle.state != before, "the action was to change the game at the table"
    why = effects.describe()
    bumps, version = effects.version_bumps, effects.version_after
    assert bumps == 1, why
    main = [m["version"] for m in effects.delivered.main]
    assert main == [version], why
    public = [m["version"] for m in effects.delivered.public]
    assert public == [version], why


def test_one_battle_action_runs_at_most_10_queries(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    battle = a_battle_being_fought(game16)

    effects = effects_of(
        tournament_id=game16.id,
        operation=one_play(game16, battle),
        on_commit=django_capture_on_commit_callbacks,
    )

    count = len(effects.queries)
    assert count <= ACTION_QUERIES, effects.describe()
