"""Calls for a judge (issue 32): a player calls from his page or his table, a judge takes
the call and closes it with a note. One open call per player; every step is in the log;
R1.1: only the caller and the judges read a call, and the public is not even told of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from battles.models import Battle, BattleSeat
from referees import services
from referees.kernel.access import judge_key_create
from referees.kernel.visibility import Viewer
from referees.live.events import NOT_PUBLIC_KINDS
from referees.models import JudgeCall, LogEntry
from referees.reading.log import tournament_log
from referees.reading.state import tournament_state
from referees.services import Actor, TournamentError
from referees.texts.log import log_context, log_text
from sl5r.api_errors import error_status
from strategic_map.models import Army, Campaign
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


def make_call(game: Game, clan: str = "crab", role: str = "general", **kwargs: Any) -> JudgeCall:
    options = {"reason": "rules", "text": "", **kwargs}
    return services.judge_call_make(player=game.player(clan, role), now=timezone.now(), **options)


def state_of(game: Game, viewer: Viewer) -> dict[str, Any]:
    return tournament_state(tournament=game.refresh(), viewer=viewer, now=timezone.now())


def other_judge(game: Game, django_user_model: Any) -> AbstractBaseUser:
    user: AbstractBaseUser = django_user_model.objects.create_user("hanna", password="x")
    game.tournament.judges.add(user)
    return user


# --- The service ------------------------------------------------------------------------------


def test_a_call_notes_where_the_general_stands_and_is_logged(game16: Game) -> None:
    version = game16.refresh().campaign.version
    general = game16.player("crab")

    call = make_call(game16, text="  may I   move twice? ")

    assert call.province == game16.province_of(general.army.code)
    assert call.battle is None
    assert call.text == "may I move twice?"
    entry = LogEntry.objects.get(action="call_made")
    assert entry.actor == f"general {general.name} (crab)"
    assert entry.data["call_reason"] == "rules"
    assert entry.data["province"] == call.province
    assert Campaign.objects.get(pk=game16.tournament.campaign_id).version == version + 1


def test_a_repeated_tap_is_one_call(game16: Game) -> None:
    first = make_call(game16)
    again = make_call(game16, reason="dispute", text="another")

    assert again.pk == first.pk
    assert JudgeCall.objects.count() == 1
    assert LogEntry.objects.filter(action="call_made").count() == 1


def test_a_call_from_a_battle_table_names_the_table(game16: Game) -> None:
    general = game16.player("crab")
    battle = Battle.objects.create(
        tournament=game16.tournament,
        province="kaiu_lands",
        opened_turn=1,
        status="battle",
        opened_at=timezone.now(),
        updated_at=timezone.now(),
    )
    BattleSeat.objects.create(
        battle=battle, army=Army.objects.get(pk=general.army_id), joined_turn=1
    )

    call = make_call(game16, reason="dispute")

    assert (call.battle, call.province) == (battle.pk, "kaiu_lands")


def test_a_daimyo_calls_without_an_army(game24: Game) -> None:
    call = make_call(game24, "crane", "daimyo", reason="late")

    assert (call.province, call.battle) == ("", None)


def test_a_judge_takes_and_closes_a_call_with_a_note(game16: Game) -> None:
    call = make_call(game16)
    judge = game16.judge_actor

    taken = services.judge_call_take(
        tournament_id=game16.id, call_id=call.pk, actor=judge, now=timezone.now()
    )
    closed = services.judge_call_close(
        tournament_id=game16.id, call_id=call.pk, note="R5.4: yes", actor=judge, now=timezone.now()
    )

    assert taken.taken_by == judge.label
    assert (closed.closed_by, closed.note) == (judge.label, "R5.4: yes")
    actions = list(
        LogEntry.objects.filter(action__startswith="call_").values_list("action", flat=True)
    )
    assert actions == ["call_made", "call_taken", "call_closed"]
    # Closed, the player may call again.
    assert make_call(game16).pk != call.pk


def test_a_second_judge_is_told_who_has_the_call(game16: Game, django_user_model: Any) -> None:
    call = make_call(game16)
    services.judge_call_take(
        tournament_id=game16.id, call_id=call.pk, actor=game16.judge_actor, now=timezone.now()
    )
    hanna = Actor.of_user(other_judge(game16, django_user_model))

    error = refused(
        lambda: services.judge_call_take(
            tournament_id=game16.id, call_id=call.pk, actor=hanna, now=timezone.now()
        )
    )

    assert (error_status(error), error.code) == (409, "taken")
    assert game16.judge_actor.label in error.message
    # He may still close it (he settled it on the spot).
    services.judge_call_close(
        tournament_id=game16.id, call_id=call.pk, note="", actor=hanna, now=timezone.now()
    )
    error = refused(
        lambda: services.judge_call_close(
            tournament_id=game16.id,
            call_id=call.pk,
            note="",
            actor=game16.judge_actor,
            now=timezone.now(),
        )
    )
    assert (error_status(error), error.code) == (409, "closed")


def test_the_caller_withdraws_his_call(game16: Game) -> None:
    make_call(game16)
    general = game16.player("crab")

    call = services.judge_call_withdraw(player=general, now=timezone.now())

    assert call.closed_at is not None
    error = refused(lambda: services.judge_call_withdraw(player=general, now=timezone.now()))
    assert (error_status(error), error.code) == (404, "not_found")


@pytest.mark.parametrize(
    ("reason", "text", "message"),
    [
        ("nonsense", "", "reason: one of rules, dispute, late, device, other"),
        ("rules", "x" * 201, "text: at most 200 characters"),
    ],
)
def test_a_bad_reason_or_a_long_text_is_refused(
    game16: Game, reason: str, text: str, message: str
) -> None:
    error = refused(lambda: make_call(game16, reason=reason, text=text))

    assert (error_status(error), error.message) == (422, message)
    assert not JudgeCall.objects.exists()


def test_the_log_tells_each_step(game16: Game) -> None:
    call = make_call(game16, text="he moved my army")
    services.judge_call_close(
        tournament_id=game16.id,
        call_id=call.pk,
        note="no",
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    ctx = log_context(game16.refresh())
    rows = tournament_log(tournament=game16.tournament)
    texts = [log_text(e, ctx) for e in rows if e["action"].startswith("call_")]

    assert "called a judge to" in texts[0]
    assert "a rules question" in texts[0]
    assert "“he moved my army”" in texts[0]
    assert texts[1].endswith("closed the call of Crab general 1. “no”")


# --- R1.1: who reads a call -------------------------------------------------------------------


def test_only_the_caller_and_the_judges_read_a_call(game16: Game) -> None:
    make_call(game16, text="secret question")

    judge = state_of(game16, Viewer.judge())
    caller = state_of(game16, Viewer.of_player(game16.player("crab")))
    other = state_of(game16, Viewer.of_player(game16.player("crab", n=2)))
    public = state_of(game16, Viewer.public())

    assert [c["text"] for c in judge["calls"]] == ["secret question"]
    assert caller["call"]["text"] == "secret question"
    assert other["call"] is None
    assert "calls" not in public and "call" not in public
    assert "secret question" not in str(public) + str(other)
    # The big screen's group is not even told that something happened.
    assert "call" in NOT_PUBLIC_KINDS


# --- The API ----------------------------------------------------------------------------------


def test_a_call_taken_and_closed_through_the_api(
    api: Api, game16: Game, judge_key: str, django_user_model: Any
) -> None:
    token = game16.token(game16.player("crab"))
    made = api.post(
        f"/tournaments/{game16.id}/calls", {"reason": "dispute", "text": "swap?"}, token=token
    )
    assert made.status_code == 201, made.content
    call_id = made.json()["id"]
    assert api.post(f"/tournaments/{game16.id}/calls", {}, token=token).json()["id"] == call_id

    queue = api.get(f"/tournaments/{game16.id}/calls", token=judge_key).json()
    assert [(c["id"], c["reason"], c["taken_by"]) for c in queue] == [(call_id, "dispute", None)]

    hanna = judge_key_create(user=other_judge(game16, django_user_model)).key
    taken = api.post(f"/tournaments/{game16.id}/calls/{call_id}/take", token=hanna)
    assert taken.json()["taken_by"] == "hanna"
    mine = api.get(f"/tournaments/{game16.id}/calls/mine", token=token).json()["call"]
    assert mine["taken_by"] == "hanna"

    again = api.post(f"/tournaments/{game16.id}/calls/{call_id}/take", token=judge_key)
    assert again.status_code == 409
    assert again.json()["code"] == "taken"

    closed = api.post(
        f"/tournaments/{game16.id}/calls/{call_id}/close", {"note": "both stay"}, token=hanna
    )
    assert closed.json()["note"] == "both stay"
    mine = api.get(f"/tournaments/{game16.id}/calls/mine", token=token).json()["call"]
    assert (mine["closed_by"], mine["note"], mine["withdrawn"]) == ("hanna", "both stay", False)


def test_players_and_the_public_cannot_read_or_take_calls(
    api: Api, game16: Game, judge_key: str
) -> None:
    token = game16.token(game16.player("crab", n=2))
    call_id = make_call(game16).pk

    assert api.get(f"/tournaments/{game16.id}/calls", token=token).status_code == 403
    assert api.get(f"/tournaments/{game16.id}/calls").status_code in (401, 403)
    assert (
        api.post(f"/tournaments/{game16.id}/calls/{call_id}/take", token=token).status_code == 403
    )
    assert api.post(f"/tournaments/{game16.id}/calls", {}, token=judge_key).status_code == 403
    missing = api.post(f"/tournaments/{game16.id}/calls/999999/take", token=judge_key)
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")


def test_a_call_refusal_comes_in_russian(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.post(
        f"/tournaments/{game16.id}/calls",
        {"reason": "rules", "text": "x" * 300},
        token=token,
        headers={"Accept-Language": "ru"},
    )

    assert response.status_code == 422
    assert "не больше 200" in response.json()["detail"]
