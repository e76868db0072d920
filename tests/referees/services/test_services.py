"""The tournament services: set-up, the start, the clock, orders, corrections, the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import LogEntry, Tournament
from referees.reading.log import turn_case
from referees.reading.state import tournament_state
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.casefile import case_from_dict, case_run, expect_differences, result_to_dict
from strategic_map.models import Order, Turn
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


def actions(game: Game) -> list[str]:
    return list(
        LogEntry.objects.filter(tournament=game.tournament).values_list("action", flat=True)
    )


# --- set-up (R1) ---------------------------------------------------------------------------


def test_r1_create_refuses_impossible_settings_with_the_reason(
    make_game: Callable[..., Game],
) -> None:
    assert "too few" in refused(lambda: make_game(5)).message
    assert "5 or 6" in refused(lambda: make_game(16, base_hand=7)).message
    assert "turn_seconds" in refused(lambda: make_game(16, turn_seconds=0)).message


def test_r1_shadowlands_left_out_when_the_judge_says_so(make_game: Callable[..., Game]) -> None:
    game = make_game(21, shortfall="exclude_shadowlands", phase="setup")
    assert game.tournament.campaign.excluded_clans == ["shadowlands"]
    assert game.board()["control"]["shadowlands-shi"] is None
    error = refused(
        lambda: services.player_register(
            tournament=game.tournament,
            name="Late",
            clan="shadowlands",
            role="general",
            actor=game.judge_actor,
            now=timezone.now(),
        )
    )
    assert "not in this tournament" in error.message


def test_r1_register_refuses_a_fifth_general_and_a_second_daimyo(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(48, phase="setup", lineup={"crab": ["general"] * 4 + ["daimyo"]})
    now = timezone.now()
    register = lambda role: services.player_register(  # noqa: E731
        tournament=game.tournament,
        name="X",
        clan="crab",
        role=role,
        actor=game.judge_actor,
        now=now,
    )
    assert "at most 4 Generals, not 5 (R1)" in refused(lambda: register("general")).message
    assert "at most 1 Daimyo, not 2 (R1)" in refused(lambda: register("daimyo")).message
    assert "unknown role" in refused(lambda: register("shogun")).message


def test_r1_start_refuses_an_incomplete_lineup(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general", "general"]})
    error = refused(
        lambda: services.tournament_start(
            tournament_id=game.id, actor=game.judge_actor, now=timezone.now()
        )
    )
    assert error_status(error) == 409 and error.code == "lineup_incomplete"
    assert "Crab: 0 of 1 Daimyo registered" not in error.message
    assert "Crane: 0 of 2 Generals registered" in error.message


def test_general_gets_an_army_named_after_his_clan(game16: Game) -> None:
    assert game16.player("lion", n=2).army.code == "lion-2"


# --- the start (R3) ------------------------------------------------------------------------


def test_r3_start_runs_planning_then_negotiation_then_turn_one_on_the_clock(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="planning", planning_seconds=300, negotiation_seconds=900)
    t = game.refresh()
    assert t.phase == Tournament.Phase.PLANNING
    planning_end = t.deadline
    services.clock_sweep(now=planning_end)
    assert game.refresh().phase == Tournament.Phase.DEPLOYMENT  # nobody declared yet
    from tests.referees.conftest import declare_all

    declare_all(game.tournament, game.judge_actor, planning_end)
    t = game.refresh()
    assert t.phase == Tournament.Phase.NEGOTIATION
    assert t.deadline == planning_end + timedelta(seconds=900)
    services.clock_sweep(now=t.deadline)
    t = game.refresh()
    assert t.phase == Tournament.Phase.RUNNING
    assert Turn.objects.get(campaign=t.campaign, number=1).status == Turn.Status.OPEN


def test_r3_starting_positions_must_use_castles_first(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="planning")
    error = refused(
        lambda: services.start_positions_declare(
            tournament_id=game.id,
            clan="crab",
            positions={"crab-1": "crab-hida", "crab-2": "crab-yasuki"},
            actor=game.judge_actor,
            now=timezone.now(),
        )
    )
    assert "castle provinces first" in error.message
    assert "crab-1" not in game.board()["armies"]  # nothing placed


# --- orders (R4) ---------------------------------------------------------------------------


def test_r4_order_is_stored_changed_and_logged_with_its_author(game16: Game) -> None:
    general = game16.player("crab")
    now = timezone.now()
    services.order_give(player=general, order=OrderInput("move", ("crab-hiruma",)), now=now)
    services.order_give(player=general, order=OrderInput("hold", claim=False), now=now)
    stored = list(Order.objects.filter(army=general.army).order_by("id"))
    assert [o.kind for o in stored] == ["move", "hold"]
    assert stored[-1].author == "general Crab general 1 (crab)" and not stored[-1].by_judge
    assert actions(game16).count("order_given") == 2


def test_r4_late_order_is_refused_and_not_stored(game16: Game) -> None:
    general = game16.player("crab")
    deadline = game16.refresh().deadline
    error = refused(
        lambda: services.order_give(
            player=general, order=OrderInput("move", ("crab-hiruma",)), now=deadline
        )
    )
    assert error.code == "late" and error_status(error) == 409
    assert not Order.objects.exists()


def test_r4_daimyo_gives_no_orders(game24: Game) -> None:
    error = refused(
        lambda: services.order_give(
            player=game24.player("crab", "daimyo"), order=OrderInput("hold"), now=timezone.now()
        )
    )
    assert error_status(error) == 403


def test_r4_judge_enters_a_paper_order_recorded_as_his(game16: Game) -> None:
    services.order_enter(
        tournament_id=game16.id,
        army_code="crab-1",
        order=OrderInput("move", ("crab-hiruma",)),
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    order = Order.objects.get()
    assert order.by_judge and order.author == "judge judge"


def test_r4_a_paper_order_entered_after_the_deadline_is_stored_while_the_turn_is_open(
    game16: Game,
) -> None:
    """R4: the deadline refuses a General's own order, not the paper order he handed in on
    time, which a judge may still type in until the turn is resolved."""
    deadline = game16.refresh().deadline
    assert deadline is not None
    services.order_enter(
        tournament_id=game16.id,
        army_code="crab-1",
        order=OrderInput("move", ("crab-hiruma",)),
        actor=game16.judge_actor,
        now=deadline + timedelta(seconds=1),
    )
    assert Order.objects.get().by_judge


def test_r4_orders_while_paused_are_accepted(game16: Game) -> None:
    now = timezone.now()
    services.clock_pause(tournament_id=game16.id, actor=game16.judge_actor, now=now)
    services.order_give(
        player=game16.player("crab"),
        order=OrderInput("move", ("crab-hiruma",)),
        now=now + timedelta(hours=1),
    )
    assert Order.objects.count() == 1


# --- the clock -----------------------------------------------------------------------------


def test_pause_keeps_the_remaining_time_and_resume_restores_it(game16: Game) -> None:
    t = game16.refresh()
    now = t.deadline - timedelta(seconds=100)
    services.clock_pause(tournament_id=game16.id, actor=game16.judge_actor, now=now)
    t = game16.refresh()
    assert t.paused and t.paused_remaining == pytest.approx(100)
    assert services.clock_sweep(now=now + timedelta(hours=2)) == 0  # nothing resolves paused
    later = now + timedelta(minutes=30)
    services.clock_resume(tournament_id=game16.id, actor=game16.judge_actor, now=later)
    t = game16.refresh()
    assert t.deadline == later + timedelta(seconds=100)
    assert Turn.objects.get(campaign=t.campaign, number=1).deadline == t.deadline


def test_extend_moves_the_deadline(game16: Game) -> None:
    before = game16.refresh().deadline
    services.clock_extend(
        tournament_id=game16.id, seconds=120, actor=game16.judge_actor, now=timezone.now()
    )
    assert game16.refresh().deadline == before + timedelta(seconds=120)


def test_r4_deadline_resolves_the_turn_and_opens_the_next_at_once(game16: Game) -> None:
    deadline = game16.refresh().deadline
    services.order_give(
        player=game16.player("crab"),
        order=OrderInput("move", ("crab-hiruma",)),
        now=deadline - timedelta(seconds=1),
    )
    assert services.clock_tick(tournament_id=game16.id, now=deadline)
    assert not services.clock_tick(tournament_id=game16.id, now=deadline)  # once
    t = game16.refresh()
    assert game16.province_of("crab-1") == "crab-hiruma"
    assert t.deadline == deadline + timedelta(seconds=t.turn_seconds)
    assert Turn.objects.get(campaign=t.campaign, number=2).status == Turn.Status.OPEN
    assert actions(game16).count("turn_resolved") == 1


def test_r4_a_turn_overdue_after_downtime_gets_its_full_length_from_now(game16: Game) -> None:
    deadline = game16.refresh().deadline
    back = deadline + timedelta(hours=1)
    services.clock_sweep(now=back)
    t = game16.refresh()
    assert t.deadline == back + timedelta(seconds=t.turn_seconds)


def test_resolve_now_while_paused_keeps_the_clock_paused_for_the_next_turn(game16: Game) -> None:
    now = timezone.now()
    services.clock_pause(tournament_id=game16.id, actor=game16.judge_actor, now=now)
    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=now)
    t = game16.refresh()
    assert t.paused and t.paused_remaining == t.turn_seconds
    assert Turn.objects.get(campaign=t.campaign, number=2).status == Turn.Status.OPEN


def test_the_game_ends_after_the_last_turn(make_game: Callable[..., Game]) -> None:
    game = make_game(16, turns_total=2)
    for _ in range(2):
        services.clock_sweep(now=game.refresh().deadline)
    t = game.refresh()
    assert t.phase == Tournament.Phase.FINISHED and t.deadline is None
    assert "game_ended" in actions(game)
    state = tournament_state(tournament=t, viewer=Viewer.public(), now=timezone.now())
    assert state["scores"]["crane"]["total"] == 13  # R12: nobody moved


def test_judge_ends_the_game_and_the_open_turn_is_not_played(game16: Game) -> None:
    services.order_give(
        player=game16.player("crab"), order=OrderInput("move", ("crab-hiruma",)), now=timezone.now()
    )
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    assert game16.refresh().phase == Tournament.Phase.FINISHED
    assert game16.province_of("crab-1") == "crab-hida"
    assert Order.objects.count() == 1  # kept on record


def test_undo_returns_the_board_and_reopens_the_turn_paused(game16: Game) -> None:
    deadline = game16.refresh().deadline
    services.order_give(
        player=game16.player("crab"),
        order=OrderInput("move", ("crab-hiruma",)),
        now=deadline - timedelta(seconds=5),
    )
    services.clock_tick(tournament_id=game16.id, now=deadline)
    assert game16.province_of("crab-1") == "crab-hiruma"
    services.clock_undo(
        tournament_id=game16.id,
        actor=game16.judge_actor,
        now=deadline + timedelta(seconds=60),
        reason="wrong map",
    )
    t = game16.refresh()
    assert game16.province_of("crab-1") == "crab-hida"
    # R4: resolved at its deadline, the turn reopens with 2 minutes (see test_undo.py).
    assert t.paused and t.paused_remaining == 120
    assert Turn.objects.get(campaign=t.campaign, status=Turn.Status.OPEN).number == 1
    # The judge corrects an order and resolves again.
    services.order_enter(
        tournament_id=game16.id,
        army_code="crab-1",
        order=OrderInput("move", ("crab-kaiu",)),
        actor=game16.judge_actor,
        now=deadline + timedelta(seconds=70),
    )
    services.clock_resolve_now(
        tournament_id=game16.id, actor=game16.judge_actor, now=deadline + timedelta(seconds=80)
    )
    assert game16.province_of("crab-1") == "crab-kaiu"
    log = actions(game16)
    assert log.count("turn_resolved") == 2 and "turn_undone" in log


def test_nothing_to_undo_before_the_first_resolution(game16: Game) -> None:
    error = refused(
        lambda: services.clock_undo(
            tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now()
        )
    )
    assert error_status(error) == 409


# --- corrections and the record (R11) ------------------------------------------------------


def test_judge_moves_and_destroys_armies_and_sets_control_with_a_reason(game16: Game) -> None:
    now = timezone.now()
    judge = game16.judge_actor
    services.army_correct(
        tournament_id=game16.id,
        army_code="crab-1",
        province="beiden-pass",
        reason="marker slipped",
        actor=judge,
        now=now,
    )
    assert game16.province_of("crab-1") == "beiden-pass"
    services.army_correct(
        tournament_id=game16.id,
        army_code="lion-1",
        province=None,
        destroyed_by="winner",
        reason="battle result",
        actor=judge,
        now=now,
    )
    assert game16.board()["armies"]["lion-1"] == {
        "province": None,
        "destroyed_in_turn": 1,
        "destroyed_by": "winner",
    }
    services.control_correct(
        tournament_id=game16.id,
        province="toshi-ranbo",
        clan="crane",
        reason="agreed",
        actor=judge,
        now=now,
    )
    assert game16.board()["control"]["toshi-ranbo"] == "crane"
    assert (
        "reason"
        in refused(
            lambda: services.control_correct(
                tournament_id=game16.id,
                province="toshi-ranbo",
                clan="crab",
                reason=" ",
                actor=judge,
                now=now,
            )
        ).message
    )
    assert (
        "no province"
        in refused(
            lambda: services.army_correct(
                tournament_id=game16.id,
                army_code="crab-1",
                province="atlantis",
                reason="x",
                actor=judge,
                now=now,
            )
        ).message
    )
    entries = LogEntry.objects.filter(tournament=game16.tournament, action="army_corrected")
    assert [e.reason for e in entries] == ["marker slipped", "battle result"]
    assert entries[0].data["before"] == {"province": "crab-hida"}


def test_r11_played_turn_exports_as_a_case_that_replays_the_same_result(game16: Game) -> None:
    deadline = game16.refresh().deadline
    soon = deadline - timedelta(seconds=5)
    # A swap between different clans: a random draw decides it (R5.2).
    services.army_correct(
        tournament_id=game16.id,
        army_code="lion-1",
        province="crab-hiruma",
        reason="set up",
        actor=game16.judge_actor,
        now=soon,
    )
    services.order_give(
        player=game16.player("crab"), order=OrderInput("move", ("crab-hiruma",)), now=soon
    )
    services.order_give(
        player=game16.player("lion"), order=OrderInput("move", ("crab-hida",)), now=soon
    )
    services.clock_tick(tournament_id=game16.id, now=deadline)
    case = turn_case(tournament=game16.refresh(), number=1)
    assert case is not None and len(case["draws"]) == 1
    replay = case_from_dict(case)
    assert expect_differences(replay.expect, result_to_dict(case_run(replay))) == []
    assert turn_case(tournament=game16.tournament, number=2) is None  # not played yet


def test_every_change_is_announced_after_commit_with_a_growing_version(
    game16: Game, django_capture_on_commit_callbacks: Any
) -> None:
    sent: list[dict[str, Any]] = []
    from referees.live import events

    original = events.async_to_sync

    def capture(fn: Any) -> Any:
        return lambda group, message: sent.append({**message, "group": group})

    events.async_to_sync = capture  # type: ignore[assignment]
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.order_give(
                player=game16.player("crab"), order=OrderInput("hold"), now=timezone.now()
            )
            services.clock_pause(
                tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now()
            )
    finally:
        events.async_to_sync = original
    main = [m for m in sent if m["group"] == events.tournament_group(game16.id)]
    heard = [m for m in sent if m["group"] == events.tournament_public_group(game16.id)]
    public = [m for m in heard if m["type"] == events.EVENT_TYPE]
    assert [m["kind"] for m in main] == ["order", "clock"]
    # the order reaches the public group as a bare version note (issue 42: no state)
    notes = [m for m in heard if m["type"] == events.VERSION_TYPE]
    assert [m["version"] for m in notes] == [main[0]["version"]]
    assert not any("state_json" in m for m in notes)
    assert main[0]["version"] < main[1]["version"] == game16.refresh().campaign.version
    assert not any("state" in m or "state_json" in m for m in main)
    # the public group: the events that change what the public sees (not an order), each
    # with the public state built after its commit
    assert [m["kind"] for m in public] == ["clock"]
    states = [json.loads(m["state_json"]) for m in public]
    assert all(
        st["tournament"]["version"] >= m["version"] for st, m in zip(states, public, strict=True)
    )
    assert states[-1]["tournament"]["version"] == main[-1]["version"]
    assert all(st["viewer"]["kind"] == "public" for st in states)


def test_r4_a_turn_resolved_early_gives_the_next_turn_its_full_length_from_now(
    game16: Game,
) -> None:
    t = game16.refresh()
    early = t.deadline - timedelta(minutes=10)
    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=early)
    assert game16.refresh().deadline == early + timedelta(seconds=t.turn_seconds)


def test_register_refuses_a_name_already_registered_whatever_its_case_or_spacing(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general"]})
    error = refused(
        lambda: services.player_register(
            tournament=game.tournament,
            name="  CRAB   general 1 ",
            clan="crane",
            role="general",
            actor=game.judge_actor,
            now=timezone.now(),
        )
    )
    assert error.code == "name_taken" and "Crab general 1" in error.message
