"""The battle tables' services: meetings, votes, the game, results on the map (R4-R10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from battles import services as battle_services
from battles.models import Battle, BattleSeat
from battles.services._table import open_table
from referees import services
from referees.kernel.visibility import Viewer
from referees.models import LogEntry
from referees.reading.state import tournament_state
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.scoring import score_breakdown, small_farms
from strategic_map.models import Army
from tests.battles.conftest import (
    PROVINCE,
    act,
    fight,
    general,
    lose_provinces,
    meet,
    move,
    resolve,
    table,
    vote,
)
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


def open_turn(game: Game) -> int:
    state = tournament_state(tournament=game.refresh(), viewer=Viewer.judge(), now=timezone.now())
    number: int = state["tournament"]["turn"]
    return number


# --- Meetings (R7) -----------------------------------------------------------------------------


def test_r7_a_turn_that_brings_two_clans_together_opens_a_meeting(game16: Game) -> None:
    version = game16.refresh().campaign.version
    battle = meet(game16)
    assert battle.status == Battle.Status.MEETING
    assert battle.opened_turn == 1
    assert battle.game == "l5r"
    assert battle.state is None
    seats = {s.army.code: s.vote for s in battle.seats.select_related("army")}
    assert seats == {"lion-1": "", "unicorn-2": ""}
    assert "battle_opened" in actions(game16)
    assert game16.refresh().campaign.version > version + 1  # the table and the turn


def test_r7_all_peace_is_peace_and_control_does_not_change(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.MEETING  # the Unicorn has not spoken yet
    vote(game16, battle, "unicorn-2", "peace")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.PEACE
    resolve(game16)  # they stay together: the table stays at peace
    battle.refresh_from_db()
    assert battle.status == Battle.Status.PEACE
    board = game16.board()
    assert board["control"][PROVINCE] == "lion"
    assert not board["armies"]["lion-1"].get("in_battle")


def test_r11_a_repeated_peace_vote_is_recorded_once_and_changes_nothing(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    voted_at = BattleSeat.objects.get(battle=battle, army__code="lion-1").voted_at
    version = game16.refresh().campaign.version

    vote(game16, battle, "lion-1", "peace")

    assert actions(game16).count("battle_vote") == 1
    assert BattleSeat.objects.get(battle=battle, army__code="lion-1").voted_at == voted_at
    assert game16.refresh().campaign.version == version


def test_r7_one_battle_vote_starts_the_battle_with_every_army_in_battle(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    vote(game16, battle, "unicorn-2", "battle")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    assert battle.state["game"] == "l5r"
    assert sorted(p["army"] for p in battle.state["players"]) == ["lion-1", "unicorn-2"]
    assert battle.setup["control"][PROVINCE] == "lion"
    hands = {p["army"]: p["hand_size"] for p in battle.setup["participants"]}
    assert hands == {"lion-1": 5, "unicorn-2": 5}
    board = game16.board()
    assert board["armies"]["lion-1"]["in_battle"] is True
    assert board["armies"]["unicorn-2"]["in_battle"] is True
    assert "battle_started" in actions(game16)


def test_r10_modifiers_use_the_control_when_the_battle_starts(game16: Game) -> None:
    # Crab in a Crab province (+1 Force), a Dragon's larger hand.
    move(game16, "dragon-1", "lion-akodo")
    resolve(game16)
    battle = table(game16)
    vote(game16, battle, "dragon-1", "battle")
    battle.refresh_from_db()
    setup = {p["army"]: p for p in battle.setup["participants"]}
    assert setup["dragon-1"]["hand_size"] == 6
    assert setup["dragon-1"]["notes"] == ["Dragon: one Fate card more"]
    assert setup["lion-1"]["force_modifier"] == 0  # his own castle is no enemy castle
    player = {p["army"]: p for p in battle.state["players"]}
    assert player["dragon-1"]["hand_size"] == 6


def test_r8_a_judge_cannot_move_an_army_away_from_its_battle_table(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "unicorn-2", "battle")
    before = game16.board()["armies"]["lion-1"]

    error = refused(
        lambda: services.army_correct(
            tournament_id=game16.id,
            army_code="lion-1",
            province="lion-ikoma",
            reason="misplaced",
            actor=game16.judge_actor,
            now=timezone.now(),
        )
    )

    assert (error.code, error_status(error)) == ("in_battle", 409)
    assert "battle table in lion-akodo" in error.message
    assert game16.board()["armies"]["lion-1"] == before
    assert "army_corrected" not in actions(game16)


def test_r4_a_general_whose_army_is_in_battle_cannot_give_orders(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "unicorn-2", "battle")
    error = refused(
        lambda: services.order_give(
            player=general(game16, "lion-1"),
            order=OrderInput(kind="move", path=("lion-ikoma",)),
            now=timezone.now(),
        )
    )
    assert error.code == "in_battle"
    assert error_status(error) == 422


def test_r7_a_general_at_a_peaceful_table_may_call_for_battle_later(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    vote(game16, battle, "unicorn-2", "peace")
    resolve(game16)
    vote(game16, battle, "lion-1", "battle")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    assert game16.board()["armies"]["unicorn-2"]["in_battle"] is True


def test_r7_a_meeting_disperses_when_the_armies_part(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    move(game16, "unicorn-2", "unicorn-shinjo")
    resolve(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.DISPERSED
    assert battle.ended_at is not None
    assert "battle_dispersed" in actions(game16)


def test_r7_a_newcomer_to_a_meeting_is_seated_and_the_meeting_reopens(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    vote(game16, battle, "unicorn-2", "peace")
    move(game16, "dragon-1", PROVINCE)
    resolve(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.MEETING
    seats = {s.army.code: s.vote for s in battle.seats.select_related("army")}
    assert seats == {"lion-1": "peace", "unicorn-2": "peace", "dragon-1": ""}
    assert Battle.objects.filter(tournament=game16.tournament).count() == 1


def test_r7_votes_are_for_a_generals_own_army_at_an_open_meeting(game16: Game) -> None:
    battle = meet(game16)
    other = general(game16, "crab-1")
    error = refused(
        lambda: battle_services.meeting_vote(
            battle_id=battle.pk, army_code=None, vote="peace", actor=other, now=timezone.now()
        )
    )
    assert error_status(error) == 403 and "not at this table" in error.message
    error = refused(
        lambda: battle_services.meeting_vote(
            battle_id=battle.pk,
            army_code="unicorn-2",
            vote="peace",
            actor=general(game16, "lion-1"),
            now=timezone.now(),
        )
    )
    assert error_status(error) == 403 and "own army" in error.message
    assert error_status(refused(lambda: vote(game16, battle, "lion-1", "maybe"))) == 422
    vote(game16, battle, "lion-1", "battle")
    error = refused(lambda: vote(game16, battle, "unicorn-2", "peace"))
    assert error_status(error) == 409 and "meeting is over" in error.message


def test_r7_a_judge_records_a_generals_word(game16: Game) -> None:
    battle = meet(game16)
    battle_services.meeting_vote(
        battle_id=battle.pk,
        army_code="lion-1",
        vote="peace",
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    seat = BattleSeat.objects.get(battle=battle, army__code="lion-1")
    assert seat.vote == "peace"
    entry = LogEntry.objects.filter(tournament=game16.tournament, action="battle_vote").last()
    assert entry is not None and entry.actor == "judge judge"


# --- Reinforcements (R8) -----------------------------------------------------------------------


def test_r8_an_army_entering_a_battle_joins_it_and_the_game_is_told(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    move(game16, "dragon-1", PROVINCE)
    resolve(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    seat = BattleSeat.objects.get(battle=battle, army__code="dragon-1")
    assert seat.reinforcement is True and seat.joined_turn == 2
    newcomer = next(p for p in battle.state["players"] if p["army"] == "dragon-1")
    assert newcomer["status"] == "newcomer"
    assert newcomer["hand_size"] == 6  # R10 Dragon
    assert battle.state["frozen"] is True  # R8: the current player finishes, then it freezes
    assert game16.board()["armies"]["dragon-1"]["in_battle"] is True
    participants = {p["army"]: p for p in battle.setup["participants"]}
    assert participants["dragon-1"]["reinforcement"] is True
    assert "battle_reinforced" in actions(game16)
    assert Battle.objects.filter(tournament=game16.tournament).count() == 1


# --- Results on the map (R6, R8, R9, R12) ------------------------------------------------------


def test_r8_r9_a_loser_is_destroyed_and_may_reform_two_turns_later(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    turn = open_turn(game16)
    lose_provinces(game16, battle, "lion-1")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.ENDED  # nobody else to spare: ends at once
    assert battle.outcome["winner"] == "unicorn-2"
    assert battle.casualties == [
        {"army": "lion-1", "destroyed_by": "loss", "reform_from": turn + 2}
    ]
    board = game16.board()
    assert board["armies"]["lion-1"] == {
        "province": None,
        "destroyed_in_turn": turn,
        "destroyed_by": "loss",
    }
    assert board["armies"]["unicorn-2"] == {"province": PROVINCE}
    reform = OrderInput(kind="reform", reform="lion-matsu")
    lion = general(game16, "lion-1")
    resolve(game16)  # turn + 1: too early for a loser
    error = refused(lambda: services.order_give(player=lion, order=reform, now=timezone.now()))
    assert error_status(error) == 422
    resolve(game16)  # turn + 2
    services.order_give(player=lion, order=reform, now=timezone.now())
    resolve(game16)
    assert game16.province_of("lion-1") == "lion-matsu"


def test_r6_r12_control_and_scores_follow_the_battle(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    lose_provinces(game16, battle, "lion-1")
    board = game16.board()
    assert board["control"][PROVINCE] == "unicorn"
    state = tournament_state(tournament=game16.refresh(), viewer=Viewer.judge(), now=timezone.now())
    game_map = rokugan_map()
    expected = score_breakdown(game_map, board["control"], ["lion", "unicorn"])
    assert state["scores"]["unicorn"]["total"] == expected["unicorn"].total
    assert state["scores"]["lion"]["castles"] == 1
    assert state["scores"]["unicorn"]["castles"] == 3
    assert state["small_farms"] == small_farms(game_map, board["control"], state["scores"])
    assert state["small_farms"]["unicorn"] == 1  # R7: a castle beyond the starting two


def test_r8_the_winner_chooses_who_survives_and_only_he_may(game16: Game) -> None:
    move(game16, "dragon-1", PROVINCE)
    battle = meet(game16)
    fight(game16, battle)
    lose_provinces(game16, battle, "lion-1")
    act(
        game16,
        battle,
        "unicorn-2",
        type="declare",
        kind="enlightenment",
        army="unicorn-2",
        confirm=True,
    )
    battle.refresh_from_db()
    assert battle.status == Battle.Status.DECIDED
    assert battle.outcome["losers"] == ["lion-1"]

    def choose(by: str | None, survivors: list[str]) -> Battle:
        actor = game16.judge_actor if by is None else general(game16, by)
        return battle_services.battle_result_choose(
            battle_id=battle.pk, survivors=survivors, actor=actor, now=timezone.now()
        )

    assert error_status(refused(lambda: choose("dragon-1", ["dragon-1"]))) == 403
    error = refused(lambda: choose("unicorn-2", ["lion-1"]))
    assert error_status(error) == 422 and "lost" in error.message
    error = refused(lambda: choose("unicorn-2", ["crab-1"]))
    assert error_status(error) == 422 and "not in this battle" in error.message
    error = refused(lambda: act(game16, battle, "dragon-1", type="end_turn"))
    assert error_status(error) == 409 and "winner chooses" in error.message

    turn = open_turn(game16)
    choose("unicorn-2", [])
    battle.refresh_from_db()
    assert battle.status == Battle.Status.ENDED
    casualties = {c["army"]: c for c in battle.casualties}
    assert casualties["dragon-1"] == {
        "army": "dragon-1",
        "destroyed_by": "winner",
        "reform_from": turn + 1,
    }
    assert casualties["lion-1"]["destroyed_by"] == "loss"
    assert game16.board()["control"][PROVINCE] == "unicorn"
    assert error_status(refused(lambda: choose("unicorn-2", []))) == 409


def test_r8_survivors_of_several_clans_stay_together_at_a_peaceful_table(game16: Game) -> None:
    move(game16, "dragon-1", PROVINCE)
    battle = meet(game16)
    fight(game16, battle)
    lose_provinces(game16, battle, "lion-1")
    act(
        game16,
        battle,
        "unicorn-2",
        type="declare",
        kind="enlightenment",
        army="unicorn-2",
        confirm=True,
    )
    battle_services.battle_result_choose(
        battle_id=battle.pk,
        survivors=["dragon-1"],
        actor=general(game16, "unicorn-2"),
        now=timezone.now(),
    )
    board = game16.board()
    assert board["control"][PROVINCE] == "lion"  # R6: two clans are left, nobody takes it
    assert not board["armies"]["dragon-1"].get("in_battle")
    after = table(game16)
    assert after.status == Battle.Status.PEACE
    assert {s.army.code for s in after.seats.select_related("army")} == {"dragon-1", "unicorn-2"}


def test_r8_a_truce_ends_the_battle_with_everyone_alive(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="truce", agree=True)
    act(game16, battle, "unicorn-2", type="truce", agree=True)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.ENDED
    assert battle.outcome["kind"] == "truce"
    assert battle.casualties == []
    board = game16.board()
    assert board["armies"]["lion-1"] == {"province": PROVINCE}
    assert board["control"][PROVINCE] == "lion"
    assert table(game16).status == Battle.Status.PEACE


def test_r13_an_action_the_game_refuses_is_refused_with_its_reason(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "battle")
    error = refused(lambda: act(game16, battle, "lion-1", type="begin"))
    assert error_status(error) == 422 and "stronghold" in error.message
    error = refused(lambda: act(game16, battle, "lion-1", type="fireball"))
    assert error_status(error) == 422 and "unknown action" in error.message
    error = refused(lambda: act(game16, battle, "crab-1", type="end_turn"))
    assert error_status(error) == 403


def test_r8_a_general_always_acts_as_his_own_army(game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "battle")
    act(game16, battle, "lion-1", type="stronghold", honor=5, province_strength=5, gold=5)
    # Claiming to be the judge does not help: "by" is set from the caller.
    action = {"type": "stronghold", "army": "unicorn-2", "honor": 5, "by": "judge"}
    error = refused(
        lambda: battle_services.battle_act(
            battle_id=battle.pk,
            action={**action, "province_strength": 5, "gold": 5},
            actor=general(game16, "lion-1"),
            now=timezone.now(),
        )
    )
    assert error_status(error) == 422 and "for himself" in error.message
    entry = LogEntry.objects.filter(tournament=game16.tournament, action="battle_action").last()
    assert entry is not None and entry.data["move"]["by"] == "lion-1"


# --- A judge's correction ----------------------------------------------------------------------


def test_r8_a_judge_corrects_a_result_and_the_board_follows(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    lose_provinces(game16, battle, "lion-1")
    now = timezone.now()
    error = refused(
        lambda: battle_services.battle_correct(
            battle_id=battle.pk,
            kind="truce",
            winner=None,
            survivors=[],
            reason="scoring slip",
            actor=general(game16, "unicorn-2"),
            now=now,
        )
    )
    assert error_status(error) == 403
    battle_services.battle_correct(
        battle_id=battle.pk,
        kind="truce",
        winner=None,
        survivors=[],
        reason="the Lion still had a province",
        actor=game16.judge_actor,
        now=now,
    )
    battle.refresh_from_db()
    assert battle.outcome["kind"] == "truce" and battle.outcome["corrected"] is True
    assert battle.casualties == []
    board = game16.board()
    assert board["armies"]["lion-1"] == {"province": PROVINCE}
    assert board["control"][PROVINCE] == "lion"  # back to what it was before the result
    assert table(game16).status == Battle.Status.PEACE
    entry = LogEntry.objects.filter(tournament=game16.tournament, action="battle_corrected").get()
    assert entry.reason == "the Lion still had a province"

    battle_services.battle_correct(
        battle_id=battle.pk,
        kind="win",
        winner="lion-1",
        survivors=[],
        reason="the Unicorn conceded",
        actor=game16.judge_actor,
        now=now,
    )
    battle.refresh_from_db()
    assert [c["army"] for c in battle.casualties] == ["unicorn-2"]
    assert battle.casualties[0]["destroyed_by"] == "winner"
    board = game16.board()
    assert board["armies"]["unicorn-2"]["province"] is None
    assert board["control"][PROVINCE] == "lion"
    # The peaceful table of the truce disperses: only the Lion is left.
    statuses = Battle.objects.filter(tournament=game16.tournament).values_list("status", flat=True)
    assert sorted(statuses) == ["dispersed", "ended"]


def test_r8_battles_still_going_on_stop_when_the_game_ends(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    battle.refresh_from_db()
    assert battle.status == Battle.Status.STOPPED
    assert game16.board()["control"][PROVINCE] == "lion"
    assert "battle_stopped" in actions(game16)
    error = refused(lambda: act(game16, battle, "lion-1", type="end_turn"))
    assert error_status(error) == 409 and "ended" in error.message


def test_r8_the_last_turn_stops_the_battles(make_game: Callable[..., Game]) -> None:
    game = make_game(16, turns_total=2)
    battle = fight(game, meet(game))
    resolve(game)
    battle.refresh_from_db()
    assert game.refresh().phase == "finished"
    assert battle.status == Battle.Status.STOPPED


# --- Settings ----------------------------------------------------------------------------------


def test_r14_a_bushido_tournament_plays_its_battles_with_the_turns_set(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, battle_game="bushido", bushido_turns=6)
    battle = meet(game)
    assert battle.game == "bushido"
    vote(game, battle, "lion-1", "battle")
    battle.refresh_from_db()
    assert battle.state["game"] == "bushido"
    assert battle.state["turns"] == 6


def test_r14_tournament_create_refuses_an_unknown_battle_game(
    make_game: Callable[..., Game],
) -> None:
    assert "battle_game" in refused(lambda: make_game(16, battle_game="chess")).message
    assert "bushido_turns" in refused(lambda: make_game(16, bushido_turns=0)).message


# --- Undoing a turn puts its tables back (R4 undo, R7, R8) -------------------------------------


def undo(game: Game) -> None:
    services.clock_undo(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


def test_undoing_a_turn_removes_the_meeting_it_opened_and_resolving_again_reopens_it(
    game16: Game,
) -> None:
    meet(game16)
    undo(game16)
    assert not Battle.objects.filter(tournament=game16.tournament).exists()
    assert "unicorn-2" not in {
        code for code, spot in game16.board()["armies"].items() if spot.get("province") == PROVINCE
    }
    resolve(game16)  # the Unicorn's order still stands: the same meeting again
    assert table(game16).status == Battle.Status.MEETING


def test_undoing_a_turn_brings_back_the_peaceful_meeting_it_dispersed_with_its_votes(
    game16: Game,
) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    vote(game16, battle, "unicorn-2", "peace")
    move(game16, "unicorn-2", "unicorn-shinjo")  # the Unicorn leaves: the meeting disperses
    resolve(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.DISPERSED
    undo(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.PEACE
    assert battle.ended_at is None
    assert {s.army.code: s.vote for s in battle.seats.select_related("army")} == {
        "lion-1": "peace",
        "unicorn-2": "peace",
    }


def test_r8_undoing_a_turn_takes_its_reinforcement_out_of_the_battle_again(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    battle.refresh_from_db()
    state_before = battle.state
    move(game16, "dragon-1", PROVINCE)
    resolve(game16)
    undo(game16)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    assert battle.state == state_before
    assert not BattleSeat.objects.filter(battle=battle, army__code="dragon-1").exists()
    assert not game16.board()["armies"]["dragon-1"].get("in_battle")


def test_undo_is_refused_when_a_battle_started_after_the_turn_and_nothing_changes(
    game16: Game,
) -> None:
    battle = meet(game16)
    vote(game16, battle, "unicorn-2", "battle")  # after the resolution
    board = game16.board()
    error = refused(lambda: undo(game16))
    assert error_status(error) == 409 and error.code == "tables_changed"
    assert "Akodo Lands" in str(error)  # the province by its name, not its code (issue 30)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    assert game16.board() == board


# --- The cost of a turn for the tables ---------------------------------------------------------


def test_a_turn_reads_the_open_tables_in_the_same_queries_however_many_there_are(
    game16: Game,
) -> None:
    """battles_sync runs inside every resolution: no query per open table or per seat."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from strategic_map.models import Army

    meet(game16)
    tournament = game16.refresh()
    armies = {a.code: a for a in Army.objects.filter(campaign=tournament.campaign)}

    def sync_queries(pairs: list[tuple[str, str]]) -> int:
        meetings = [
            {"province": PROVINCE, "armies": ["lion-1", "unicorn-2"], "new": False},
            *(
                {"province": f"table-{i}", "armies": list(pair), "new": False}
                for i, pair in enumerate(pairs)
            ),
        ]
        result = {"meetings": meetings, "reinforcements": []}
        with CaptureQueriesContext(connection) as queries:
            battle_services.battles_sync(
                tournament=tournament, turn_number=2, result=result, now=timezone.now()
            )
        return len(queries)

    one = sync_queries([])
    for i, pair in enumerate(
        [("crab-1", "crane-1"), ("crab-2", "crane-2"), ("dragon-2", "lion-2")]
    ):
        open_table(  # tables already open, unchanged by this turn
            tournament,
            province=f"table-{i}",
            armies={code: armies[code] for code in pair},
            turn=1,
            now=timezone.now(),
        )
    four = sync_queries([("crab-1", "crane-1"), ("crab-2", "crane-2"), ("dragon-2", "lion-2")])
    assert four == one


def test_a_busy_turn_changes_its_tables_in_the_same_queries_however_many_tables_and_armies(
    game16: Game,
) -> None:
    """Tables opening, gaining and losing armies, dispersing, and battles reinforced (R7, R8):
    the sync reads and writes them together, so a turn that moves three times the tables and
    armies costs the resolution no more queries than one that moves a few."""
    battle = fight(game16, meet(game16))  # lion-1 and unicorn-2 fight in PROVINCE
    battle.refresh_from_db()
    tournament = game16.refresh()
    armies = {a.code: a for a in Army.objects.filter(campaign=tournament.campaign)}
    # Battles going on elsewhere: a copy of that one's game in other provinces of the map.
    elsewhere = iter(sorted(p for p in rokugan_map().provinces if p != PROVINCE))

    def seated(province: str, *codes: str, turn: int) -> None:
        open_table(
            tournament,
            province=province,
            armies={code: armies[code] for code in codes},
            turn=turn,
            now=timezone.now(),
        )

    def busy_turn(turn: int, size: int) -> int:
        """``size`` tables of each kind of change; the sync's queries."""
        meetings: list[dict[str, Any]] = []
        reinforcements: list[dict[str, Any]] = []
        for i in range(size):
            tag = f"turn{turn}-{i}"
            meetings.append({"province": f"{tag}-opens", "armies": ["crab-1", "crane-1"]})
            seated(f"{tag}-gains", "crab-2", "crane-2", turn=turn - 1)
            meetings.append(
                {"province": f"{tag}-gains", "armies": ["crab-2", "crane-2", "dragon-2"]}
            )
            seated(f"{tag}-loses", "phoenix-1", "scorpion-1", "lion-2", turn=turn - 1)
            meetings.append({"province": f"{tag}-loses", "armies": ["phoenix-1", "scorpion-1"]})
            seated(f"{tag}-parts", "phoenix-2", "scorpion-2", turn=turn - 1)
            province = next(elsewhere)
            fighting = Battle.objects.create(
                tournament=tournament,
                province=province,
                opened_turn=turn - 1,
                status=Battle.Status.BATTLE,
                state=battle.state,
                setup={**(battle.setup or {}), "province": province},
                opened_at=timezone.now(),
                started_at=timezone.now(),
                updated_at=timezone.now(),
            )
            BattleSeat.objects.bulk_create(
                BattleSeat(battle=fighting, army=armies[code], joined_turn=turn - 1)
                for code in ("lion-1", "unicorn-2")
            )
            reinforcements.append({"province": province, "armies": ["dragon-1"]})
        result = {"meetings": meetings, "reinforcements": reinforcements}
        with CaptureQueriesContext(connection) as queries:
            battle_services.battles_sync(
                tournament=tournament, turn_number=turn, result=result, now=timezone.now()
            )
        done = LogEntry.objects.filter(tournament=tournament, turn=turn).values_list(
            "action", flat=True
        )
        # Every change made, so that the counts compare turns that did the work.
        assert sorted(done) == sorted(
            ["battle_opened"] * size
            + ["battle_seats_changed"] * 2 * size
            + ["battle_dispersed"] * size
            + ["battle_reinforced"] * size
        )
        # Their tables out of the way of the next turn's: nothing left for it to disperse.
        Battle.objects.filter(tournament=tournament, opened_turn__in=[turn - 1, turn]).exclude(
            pk=battle.pk
        ).delete()
        return len(queries)

    few = busy_turn(10, size=1)  # turns of their own: the log lines counted are the sync's
    many = busy_turn(20, size=3)
    assert many == few
