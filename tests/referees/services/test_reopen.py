"""Issue 30: "End the game" by mistake is taken back, and undo never promises what it then
refuses. The turn the end left unplayed opens again, paused, with its orders; the tables
the end stopped go on as they were; then the turn before can be undone."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.utils import timezone

from battles.models import Battle
from referees import services
from referees.models import LogEntry, Tournament
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from strategic_map.models import Order, Turn
from tests.battles.conftest import fight, meet
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def _refused(call: Callable[[], object]) -> TournamentError:
    with pytest.raises(TournamentError) as refused:
        call()
    return refused.value


def test_a_mistaken_end_is_reopened_with_its_turn_its_orders_and_its_tables(
    game16: Game,
) -> None:
    judge = game16.judge_actor
    battle = meet(game16)  # turn 1 resolved: a meeting in lion-akodo, nobody has voted yet
    services.order_give(player=game16.player("crab"), order=OrderInput("hold"), now=timezone.now())
    services.clock_end(tournament_id=game16.id, actor=judge, now=timezone.now())  # the mis-click
    battle.refresh_from_db()
    assert battle.status == Battle.Status.STOPPED

    # The undo says at once why it cannot be done, instead of offering it.
    preview = services.undo_preview(tournament_id=game16.id)
    assert "reopen it first" in preview.problem
    refused = _refused(
        lambda: services.clock_undo(
            tournament_id=game16.id, actor=judge, now=timezone.now(), reason="x", turn=1
        )
    )
    assert error_status(refused) == 409 and "reopen it first" in refused.message

    services.game_reopen(
        tournament_id=game16.id, actor=judge, now=timezone.now(), reason="pressed End by mistake"
    )

    t = game16.refresh()
    assert t.phase == Tournament.Phase.RUNNING and t.paused
    assert t.paused_remaining is not None and 120 <= t.paused_remaining <= t.turn_seconds
    turn = Turn.objects.get(campaign=t.campaign, status=Turn.Status.OPEN)
    assert turn.number == 2
    assert Order.objects.filter(turn=turn, army__code="crab-1").exists()  # his order stands
    battle.refresh_from_db()
    assert battle.status == Battle.Status.MEETING and battle.ended_at is None
    entry = LogEntry.objects.get(tournament=t, action="game_reopened")
    assert entry.reason == "pressed End by mistake" and entry.turn == 2

    # The stop and the resumption cancel out: nothing of them is offered as discarded.
    preview = services.undo_preview(tournament_id=game16.id)
    assert preview.problem == ""
    assert not [i for i in preview.items if i.action in ("battle_stopped", "battle_resumed")]
    services.clock_undo(
        tournament_id=game16.id, actor=judge, now=timezone.now(), reason="back to 1", turn=1
    )
    assert Turn.objects.get(campaign=t.campaign, status=Turn.Status.OPEN).number == 1
    assert not Battle.objects.filter(pk=battle.pk).exists()  # the meeting turn 1 opened


def test_an_undo_that_cannot_be_done_says_so_first_naming_the_province(game16: Game) -> None:
    """The dialog offered the undo, then answered 409 "the table in lion-akodo …"."""
    fight(game16, meet(game16))  # a battle started since turn 1 was resolved

    preview = services.undo_preview(tournament_id=game16.id)

    assert preview.problem.startswith("the table in Akodo Lands has changed since turn 1")
    refused = _refused(
        lambda: services.clock_undo(
            tournament_id=game16.id,
            actor=game16.judge_actor,
            now=timezone.now(),
            reason="x",
            turn=1,
        )
    )
    assert refused.message == preview.problem


def test_reopening_is_refused_with_a_reason_when_there_is_nothing_to_reopen(
    game16: Game, make_game: Callable[..., Game]
) -> None:
    judge = game16.judge_actor
    running = _refused(
        lambda: services.game_reopen(
            tournament_id=game16.id, actor=judge, now=timezone.now(), reason="why"
        )
    )
    assert error_status(running) == 409 and "has not ended" in running.message

    services.clock_end(tournament_id=game16.id, actor=judge, now=timezone.now())
    blank = _refused(
        lambda: services.game_reopen(
            tournament_id=game16.id, actor=judge, now=timezone.now(), reason="  "
        )
    )
    assert error_status(blank) == 400 and "reason" in blank.message

    # A game that ended after its last turn has no unplayed turn to open.
    short = make_game(16, turns_total=1)
    services.clock_resolve_now(
        tournament_id=short.id, actor=short.judge_actor, now=timezone.now(), turn=1
    )
    assert short.refresh().phase == Tournament.Phase.FINISHED
    over = _refused(
        lambda: services.game_reopen(
            tournament_id=short.id, actor=short.judge_actor, now=timezone.now(), reason="more"
        )
    )
    assert error_status(over) == 409 and "after its last turn" in over.message
    # ... and its last turn still undoes as it always did.
    assert services.undo_preview(tournament_id=short.id).problem == ""


def test_reopening_through_the_api_is_a_judges_with_a_reason(
    api: Api, game16: Game, judge_key: str
) -> None:
    services.clock_resolve_now(
        tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), turn=1
    )
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    path = f"/tournaments/{game16.id}/clock/reopen"

    assert api.post(path, {"reason": ""}, token=judge_key).status_code == 422
    player = api.post(path, {"reason": "x"}, token=game16.token(game16.player("crab")))
    assert player.status_code in (401, 403)
    done = api.post(path, {"reason": "mis-click"}, token=judge_key)

    assert done.status_code == 200, done.content
    assert game16.refresh().phase == Tournament.Phase.RUNNING
    assert game16.refresh().paused
    preview = api.get(f"/tournaments/{game16.id}/clock/undo", token=judge_key).json()
    assert (preview["turn"], preview["problem"]) == (1, "")
