"""Consent at the battle table (R8, R13): a player changes his own counts; another's only
when that player (or a judge) confirms; an action that ends a game asks to be confirmed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from battles import services as battle_services
from battles.models import Battle, BattleProposal
from referees.models import LogEntry
from referees.services import TournamentError
from referees.texts.log import log_context, log_text, log_who
from sl5r.api_errors import error_status
from tests.battles.conftest import act, fight, general, meet, vote
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


def counts(battle: Battle, army: str) -> dict[str, Any]:
    battle.refresh_from_db()
    player = next(p for p in battle.state["players"] if p["army"] == army)
    return {"honor": player["honor"], "provinces": player["provinces"], "rings": player["rings"]}


def answer(
    game: Game, battle: Battle, proposal: BattleProposal, by: str | None, word: str
) -> Battle:
    actor = game.judge_actor if by is None else general(game, by)
    return battle_services.battle_proposal_answer(
        battle_id=battle.pk, proposal_id=proposal.pk, answer=word, actor=actor, now=timezone.now()
    )


def logged(game: Game, prefix: str) -> list[str]:
    rows = LogEntry.objects.filter(tournament=game.tournament, action__startswith=prefix)
    return list(rows.order_by("id").values_list("action", flat=True))


def test_r13_a_general_changing_the_opponents_honor_makes_a_proposal_not_a_change(
    game16: Game,
) -> None:
    battle = fight(game16, meet(game16))
    before = counts(battle, "unicorn-2")
    act(game16, battle, "lion-1", type="honor", army="unicorn-2", delta=-3)
    assert counts(battle, "unicorn-2") == before
    proposal = BattleProposal.objects.get(battle=battle)
    assert (proposal.by, proposal.to, proposal.status) == ("lion-1", "unicorn-2", "open")
    assert proposal.action["delta"] == -3
    # A second tap (a retry) does not make a second proposal.
    act(game16, battle, "lion-1", type="honor", army="unicorn-2", delta=-3)
    assert BattleProposal.objects.filter(battle=battle).count() == 1
    assert logged(game16, "battle_proposal") == ["battle_proposal_made"]


def test_r13_the_other_player_confirms_and_the_change_is_applied(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="province", army="unicorn-2", delta=-1)
    proposal = BattleProposal.objects.get(battle=battle)
    # Only the player concerned (or a judge) confirms; the proposer cannot.
    error = refused(lambda: answer(game16, battle, proposal, "lion-1", "confirm"))
    assert error_status(error) == 403
    answer(game16, battle, proposal, "unicorn-2", "confirm")
    assert counts(battle, "unicorn-2")["provinces"] == 3
    proposal.refresh_from_db()
    assert proposal.status == "confirmed" and proposal.answered_by == "unicorn-2"
    error = refused(lambda: answer(game16, battle, proposal, "unicorn-2", "confirm"))
    assert error_status(error) == 409  # applied once only
    assert counts(battle, "unicorn-2")["provinces"] == 3
    assert logged(game16, "battle_proposal") == [
        "battle_proposal_made",
        "battle_proposal_confirmed",
    ]


def test_r13_a_confirmed_proposal_is_one_log_line_naming_proposer_and_confirmer(
    game16: Game,
) -> None:
    """Issue 30: "proposed", "confirmed: marked 1 province lost" and "marked 1 province
    lost" read as two provinces lost, and credited the confirmer with the change."""
    battle = fight(game16, meet(game16))
    actions_before = LogEntry.objects.filter(action="battle_action").count()
    act(game16, battle, "lion-1", type="province", army="unicorn-2", delta=-1)
    answer(game16, battle, BattleProposal.objects.get(battle=battle), "unicorn-2", "confirm")

    assert LogEntry.objects.filter(action="battle_action").count() == actions_before
    entry = LogEntry.objects.get(tournament=game16.tournament, action="battle_proposal_confirmed")
    assert entry.data["move"]["by"] == "lion-1" and entry.data["by_army"] == "lion-1"
    row = {"action": entry.action, "data": entry.data, "by": entry.actor, "turn": entry.turn}
    text = log_text(row, log_context(game16.refresh()))
    ctx = log_context(game16.refresh())
    assert text.count(ctx.army("lion-1")) == 1, text  # the proposer makes the change
    assert f"as proposed; {log_who(entry.actor)} confirmed it" in text, text
    assert text.count("province") <= 2, text  # "in <province>" and the one province lost


def test_r13_the_proposer_withdraws_and_nothing_changes(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    before = counts(battle, "unicorn-2")
    act(game16, battle, "lion-1", type="ring", army="unicorn-2", element="fire")
    proposal = BattleProposal.objects.get(battle=battle)
    error = refused(lambda: answer(game16, battle, proposal, "unicorn-2", "withdraw"))
    assert error_status(error) == 403  # only its proposer withdraws it
    answer(game16, battle, proposal, "lion-1", "withdraw")
    proposal.refresh_from_db()
    assert proposal.status == "withdrawn"
    assert counts(battle, "unicorn-2") == before
    assert logged(game16, "battle_proposal") == [
        "battle_proposal_made",
        "battle_proposal_withdrawn",
    ]


def test_r13_the_other_player_declines_and_nothing_changes(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    before = counts(battle, "unicorn-2")
    act(game16, battle, "lion-1", type="honor", army="unicorn-2", delta=2)
    proposal = BattleProposal.objects.get(battle=battle)
    answer(game16, battle, proposal, "unicorn-2", "decline")
    proposal.refresh_from_db()
    assert proposal.status == "declined"
    assert counts(battle, "unicorn-2") == before
    assert logged(game16, "battle_proposal") == ["battle_proposal_made", "battle_proposal_declined"]


def test_r13_a_judge_confirms_a_proposal_for_the_player(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="honor", army="unicorn-2", delta=2)
    proposal = BattleProposal.objects.get(battle=battle)
    before = counts(battle, "unicorn-2")["honor"]
    answer(game16, battle, proposal, None, "confirm")
    assert counts(battle, "unicorn-2")["honor"] == before + 2


def test_r13_a_judges_change_needs_no_consent(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    for _ in range(4):
        act(game16, battle, None, type="province", army="unicorn-2", delta=-1)
    battle.refresh_from_db()
    assert not BattleProposal.objects.filter(battle=battle).exists()
    assert battle.status == Battle.Status.ENDED and battle.outcome["winner"] == "lion-1"


def test_r8_a_players_own_last_province_needs_his_confirmation(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    for _ in range(3):
        act(game16, battle, "lion-1", type="province", army="lion-1", delta=-1)
    error = refused(lambda: act(game16, battle, "lion-1", type="province", army="lion-1", delta=-1))
    assert error_status(error) == 409 and error.code == "confirm"
    assert counts(battle, "lion-1")["provinces"] == 1
    act(game16, battle, "lion-1", type="province", army="lion-1", delta=-1, confirm=True)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.ENDED and battle.outcome["losers"] == ["lion-1"]


def test_r8_honor_brought_down_to_minus_20_needs_confirmation(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="honor", army="lion-1", delta=-10)
    act(game16, battle, "lion-1", type="honor", army="lion-1", delta=-10)
    assert counts(battle, "lion-1")["honor"] == -15
    error = refused(lambda: act(game16, battle, "lion-1", type="honor", army="lion-1", delta=-5))
    assert error.code == "confirm"
    act(game16, battle, "lion-1", type="honor", army="lion-1", delta=-5, confirm=True)
    assert counts(battle, "lion-1")["honor"] == -20


def test_r8_a_proposal_that_ends_the_game_for_the_other_waits_for_him(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    for _ in range(3):
        act(game16, battle, "unicorn-2", type="province", army="unicorn-2", delta=-1)
    act(game16, battle, "lion-1", type="province", army="unicorn-2", delta=-1)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.BATTLE
    proposal = BattleProposal.objects.get(battle=battle, status="open")
    answer(game16, battle, proposal, "unicorn-2", "confirm")
    battle.refresh_from_db()
    assert battle.status == Battle.Status.ENDED and battle.outcome["winner"] == "lion-1"


def test_r8_proposals_still_waiting_lapse_when_the_battle_is_decided(game16: Game) -> None:
    battle = fight(game16, meet(game16))
    act(game16, battle, "lion-1", type="honor", army="unicorn-2", delta=1)
    for _ in range(4):
        act(game16, battle, None, type="province", army="unicorn-2", delta=-1)
    proposal = BattleProposal.objects.get(battle=battle)
    assert proposal.status == "lapsed"


# --- The API ---------------------------------------------------------------------------------


def _path(game: Game, battle: Battle, rest: str) -> str:
    return f"/tournaments/{game.id}/battles/{battle.pk}{rest}"


def test_r13_api_the_proposal_shows_on_both_phones_and_the_other_confirms(
    game16: Game, api: Api
) -> None:
    battle = fight(game16, meet(game16))
    lion, unicorn = (game16.token(general(game16, a)) for a in ("lion-1", "unicorn-2"))
    body = {"type": "province", "army": "unicorn-2", "delta": -1}
    response = api.post(_path(game16, battle, "/actions"), body, token=lion)
    assert response.status_code == 200, response.content
    mine = response.json()["proposals"]
    assert [(p["by"], p["to"], p["may_answer"], p["may_withdraw"]) for p in mine] == [
        ("lion-1", "unicorn-2", False, True)
    ]
    theirs = api.get(_path(game16, battle, ""), token=unicorn).json()["proposals"]
    assert [(p["may_answer"], p["may_withdraw"]) for p in theirs] == [(True, False)]
    pid = theirs[0]["id"]
    refused_ = api.post(
        _path(game16, battle, f"/proposals/{pid}"), {"answer": "confirm"}, token=lion
    )
    assert refused_.status_code == 403 and refused_.json()["detail"]
    row = api.post(
        _path(game16, battle, f"/proposals/{pid}"), {"answer": "confirm"}, token=unicorn
    ).json()
    assert row["proposals"] == []
    player = next(p for p in row["table"]["players"] if p["army"] == "unicorn-2")
    assert player["provinces"] == 3


def test_r13_api_a_declined_proposal_is_reported_to_its_maker_and_who_declined(
    game16: Game, api: Api
) -> None:
    """Issue 30: the proposer kept "Proposed: it takes effect when … confirms" and never
    learnt that it had been declined; withdrawn and lapsed ones said nothing either."""
    battle = fight(game16, meet(game16))
    lion, unicorn = (game16.token(general(game16, a)) for a in ("lion-1", "unicorn-2"))
    made = api.post(
        _path(game16, battle, "/actions"),
        {"type": "honor", "army": "unicorn-2", "delta": -2},
        token=lion,
    ).json()
    assert made["proposals_answered"] == []
    pid = made["proposals"][0]["id"]

    api.post(_path(game16, battle, f"/proposals/{pid}"), {"answer": "decline"}, token=unicorn)

    seen = api.get(_path(game16, battle, ""), token=lion).json()
    assert seen["proposals"] == []
    (declined,) = seen["proposals_answered"]
    assert (declined["id"], declined["status"], declined["answered_by"]) == (
        pid,
        "declined",
        "unicorn-2",
    )
    assert declined["action"]["delta"] == -2 and declined["by"] == "lion-1"
    assert api.get(_path(game16, battle, ""), token=unicorn).json()["proposals_answered"] == [
        declined
    ]


def test_r8_api_an_ending_action_needs_the_confirm_flag(game16: Game, api: Api) -> None:
    battle = fight(game16, meet(game16))
    lion = game16.token(general(game16, "lion-1"))
    body = {"type": "province", "army": "lion-1", "delta": -1}
    for _ in range(3):
        assert api.post(_path(game16, battle, "/actions"), body, token=lion).status_code == 200
    response = api.post(_path(game16, battle, "/actions"), body, token=lion)
    assert response.status_code == 409 and response.json()["code"] == "confirm"
    response = api.post(_path(game16, battle, "/actions"), {**body, "confirm": True}, token=lion)
    assert response.status_code == 200 and response.json()["status"] == "ended"


def test_r13_api_a_bad_answer_is_refused_with_a_message(game16: Game, api: Api) -> None:
    battle = fight(game16, meet(game16))
    lion = game16.token(general(game16, "lion-1"))
    response = api.post(_path(game16, battle, "/proposals/999"), {"answer": "maybe"}, token=lion)
    assert response.status_code == 422
    response = api.post(_path(game16, battle, "/proposals/999"), {"answer": "confirm"}, token=lion)
    assert response.status_code == 404 and response.json()["detail"]


def test_r14_a_bushido_general_setting_the_other_sides_models_makes_a_proposal(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, battle_game="bushido")
    battle = meet(game)
    vote(game, battle, "lion-1", "battle")
    act(game, battle, "lion-1", type="tactical_test", winner="lion-1")
    act(game, battle, "lion-1", type="models", army="lion-1", count=6)
    act(game, battle, "lion-1", type="models", army="unicorn-2", count=3)
    battle.refresh_from_db()
    assert battle.state["models"] == {"lion": 6, "unicorn": None}
    proposal = BattleProposal.objects.get(battle=battle)
    answer(game, battle, proposal, "unicorn-2", "confirm")
    battle.refresh_from_db()
    assert battle.state["models"] == {"lion": 6, "unicorn": 3}
