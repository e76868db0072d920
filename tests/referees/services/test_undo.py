"""Undoing the last resolved turn (R4): what it discards, by whom, and the reopened turn's clock.

On ``game16`` (see tests/battles/conftest.py): the Unicorn's ``unicorn-2`` marches into
``lion-akodo`` and the judge resolves turn 1 five minutes early, which opens a meeting table
(R7). In turn 2 a General gives an order, the judge enters a paper order and corrects a
province's control. An undo of turn 1 discards all of that.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from referees import services
from referees.models import LogEntry, Tournament
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from strategic_map.models import Turn
from tests.battles.conftest import act, fight, meet, resolve
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

EARLY = 300  # turn 1 is resolved with five minutes left


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


def play_turn_one_early_and_act_in_turn_two(game: Game) -> datetime:
    """Turn 1 resolved EARLY seconds before its deadline, then four things in turn 2."""
    deadline = game.refresh().deadline
    assert deadline is not None
    resolved_at = deadline - timedelta(seconds=EARLY)
    services.order_enter(
        tournament_id=game.id,
        army_code="unicorn-2",
        order=OrderInput("move", ("lion-akodo",)),
        actor=game.judge_actor,
        now=resolved_at - timedelta(seconds=30),
    )
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=resolved_at)
    services.order_give(
        player=game.player("crab"),
        order=OrderInput("move", ("crab-hiruma",)),
        now=resolved_at + timedelta(seconds=10),
    )
    services.order_enter(
        tournament_id=game.id,
        army_code="dragon-1",
        order=OrderInput("hold"),
        actor=game.judge_actor,
        now=resolved_at + timedelta(seconds=20),
    )
    services.control_correct(
        tournament_id=game.id,
        province="shinomen-mori",
        clan="lion",
        reason="the Lion held it on paper",
        actor=game.judge_actor,
        now=resolved_at + timedelta(seconds=30),
    )
    return resolved_at


def by_kind(items: Any) -> dict[str, Any]:
    return {item.kind: item for item in items}


def test_r4_undo_preview_lists_orders_paper_orders_corrections_and_tables_with_authors(
    game16: Game,
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    preview = services.undo_preview(tournament_id=game16.id)

    assert preview.turn == 1
    items = by_kind(preview.items)
    assert set(items) == {"order", "paper_order", "correction", "battle"}
    crab = game16.player("crab")
    assert crab.name in items["order"].who and items["order"].army == "crab-1"
    assert "Hiruma" in items["order"].text  # the province's name on the map
    assert items["paper_order"].who == game16.judge_actor.label
    assert items["paper_order"].army == "dragon-1"
    assert items["correction"].who == game16.judge_actor.label
    assert "Shinomen Mori" in items["correction"].text
    assert "the Lion held it on paper" in items["correction"].text
    assert items["battle"].action == "battle_opened" and items["battle"].who == "the clock"
    assert items["battle"].province == "lion-akodo"


def test_r4_undo_reopens_the_turn_paused_with_the_time_it_had_left(game16: Game) -> None:
    resolved_at = play_turn_one_early_and_act_in_turn_two(game16)
    assert services.undo_preview(tournament_id=game16.id).default_seconds == EARLY

    services.clock_undo(
        tournament_id=game16.id,
        actor=game16.judge_actor,
        now=resolved_at + timedelta(seconds=600),  # turn 2 has only a few seconds left
        reason="a wrong paper order",
    )

    t = game16.refresh()
    assert t.phase == Tournament.Phase.RUNNING
    assert t.paused and t.paused_remaining == EARLY
    assert Turn.objects.get(campaign=t.campaign, status=Turn.Status.OPEN).number == 1


def test_r4_a_turn_resolved_at_its_deadline_reopens_with_two_minutes(game16: Game) -> None:
    deadline = game16.refresh().deadline
    assert deadline is not None
    services.clock_tick(tournament_id=game16.id, now=deadline)
    preview = services.undo_preview(tournament_id=game16.id)
    assert (preview.left_seconds, preview.default_seconds) == (0, 120)

    services.clock_undo(
        tournament_id=game16.id,
        actor=game16.judge_actor,
        now=deadline + timedelta(seconds=game16.tournament.turn_seconds - 6),
    )

    t = game16.refresh()
    assert t.paused and t.paused_remaining == 120  # not the 6 seconds turn 2 had left


def test_r4_the_judge_may_give_the_reopened_turn_a_full_turn(game16: Game) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)
    full = services.undo_preview(tournament_id=game16.id).full_seconds
    assert full == game16.tournament.turn_seconds

    services.clock_undo(
        tournament_id=game16.id, actor=game16.judge_actor, now=_now(game16), seconds=full
    )

    assert game16.refresh().paused_remaining == full


def test_r4_undo_refuses_a_time_outside_one_minute_to_four_hours_and_changes_nothing(
    game16: Game,
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)
    board = game16.board()
    for seconds in (0, 59, 4 * 3600 + 1, -60):
        error = refused(
            lambda s=seconds: services.clock_undo(  # type: ignore[misc]
                tournament_id=game16.id, actor=game16.judge_actor, now=_now(game16), seconds=s
            )
        )
        assert error_status(error) == 400 and str(error).startswith("seconds")
    assert game16.board() == board
    assert not LogEntry.objects.filter(action="turn_undone").exists()


def test_r11_the_log_lists_what_the_undo_discarded(game16: Game) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    services.clock_undo(
        tournament_id=game16.id, actor=game16.judge_actor, now=_now(game16), reason="wrong map"
    )

    entry = LogEntry.objects.get(action="turn_undone")
    assert entry.reason == "wrong map" and entry.turn == 1
    assert entry.data["seconds"] == EARLY
    discarded = {item["kind"]: item for item in entry.data["discarded"]}
    assert set(discarded) == {"order", "paper_order", "correction", "battle"}
    assert discarded["order"]["army"] == "crab-1"
    assert game16.player("crab").name in discarded["order"]["who"]
    assert discarded["paper_order"]["army"] == "dragon-1"
    assert discarded["correction"]["action"] == "control_corrected"
    assert all(item["at"] and item["text"] for item in discarded.values())


def test_r4_nothing_else_is_discarded_when_nothing_happened_since(game16: Game) -> None:
    deadline = game16.refresh().deadline
    assert deadline is not None
    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=deadline)

    assert services.undo_preview(tournament_id=game16.id).items == ()


def test_undo_preview_before_any_resolution_is_409(game16: Game) -> None:
    assert error_status(refused(lambda: services.undo_preview(tournament_id=game16.id))) == 409


def _now(game: Game) -> datetime:
    """A moment in turn 2, after everything ``play_turn_one_early_and_act_in_turn_two`` did."""
    deadline = game.refresh().deadline
    assert deadline is not None
    return deadline - timedelta(seconds=60)


# --- Through the API ---------------------------------------------------------------------------


def base(game: Game) -> str:
    return f"/tournaments/{game.id}"


def test_api_undo_preview_lists_the_discarded_items_for_a_judge(
    api: Api, game16: Game, judge_key: str
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    response = api.get(f"{base(game16)}/clock/undo", token=judge_key)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["turn"] == 1
    assert body["default_seconds"] == EARLY
    assert body["full_seconds"] == game16.tournament.turn_seconds
    kinds = {item["kind"] for item in body["items"]}
    assert kinds == {"order", "paper_order", "correction", "battle"}
    assert all(item["who"] and item["at"] and item["text"] for item in body["items"])


def test_api_undo_preview_is_for_judges_only(api: Api, game16: Game) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)
    token = game16.token(game16.player("crab"))

    assert api.get(f"{base(game16)}/clock/undo", token=token).status_code == 403


def test_api_undo_with_seconds_reopens_the_turn_paused_with_them(
    api: Api, game16: Game, judge_key: str
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    response = api.post(
        f"{base(game16)}/clock/undo", {"reason": "wrong order", "seconds": 600}, token=judge_key
    )

    assert response.status_code == 200, response.content
    t = game16.refresh()
    assert t.paused and t.paused_remaining == 600


def test_api_undo_with_only_a_reason_gives_the_default_time(
    api: Api, game16: Game, judge_key: str
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    response = api.post(f"{base(game16)}/clock/undo", {"reason": "wrong order"}, token=judge_key)

    assert response.status_code == 200, response.content
    assert game16.refresh().paused_remaining == EARLY


@pytest.mark.parametrize("seconds", [10, 0, 4 * 3600 + 1, -300])
def test_api_undo_refuses_bad_seconds_with_400(
    api: Api, game16: Game, judge_key: str, seconds: int
) -> None:
    play_turn_one_early_and_act_in_turn_two(game16)

    response = api.post(
        f"{base(game16)}/clock/undo", {"reason": "x", "seconds": seconds}, token=judge_key
    )

    assert response.status_code == 400
    assert response.json()["detail"].startswith("seconds")
    assert not game16.refresh().paused


def test_r4_play_at_a_table_the_undone_turn_left_alone_is_kept_and_not_listed(
    game16: Game,
) -> None:
    battle = fight(game16, meet(game16))  # opened by turn 1, begun in turn 2
    resolve(game16)  # turn 2 leaves that table as it is
    act(game16, battle, "lion-1", type="province", army="lion-1", delta=-1)

    preview = services.undo_preview(tournament_id=game16.id)

    assert preview.turn == 2
    assert not [item for item in preview.items if item.kind == "battle"]
    battle.refresh_from_db()
    state = battle.state
    services.clock_undo(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    battle.refresh_from_db()
    assert battle.state == state


def test_r4_a_turn_resolved_with_1_17_left_reopens_with_1_17_not_two_minutes(
    game16: Game,
) -> None:
    """Issue 30: the dialog offered "the time it had left: 2:00" for a turn resolved early
    with 1:17 left."""
    deadline = game16.refresh().deadline
    assert deadline is not None
    services.clock_resolve_now(
        tournament_id=game16.id, actor=game16.judge_actor, now=deadline - timedelta(seconds=77)
    )
    preview = services.undo_preview(tournament_id=game16.id)
    assert (preview.left_seconds, preview.default_seconds) == (77, 77)

    services.clock_undo(
        tournament_id=game16.id, actor=game16.judge_actor, now=deadline, reason="mis-click"
    )

    assert game16.refresh().paused_remaining == 77
