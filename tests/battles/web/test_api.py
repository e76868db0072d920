"""The battle tables' API per role (R1.1) and its refusals (always a 4xx naming the problem)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from battles.models import Battle
from referees.models import Player
from tests.battles.conftest import PROVINCE, general, meet, move, resolve, table, vote
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def token(game: Game, player: Player) -> str:
    return game.token(player)


def army_token(game: Game, army: str) -> str:
    return game.token(general(game, army))


def path(game: Game, battle: Battle | None = None, rest: str = "") -> str:
    base = f"/tournaments/{game.id}/battles"
    return f"{base}/{battle.pk}{rest}" if battle is not None else base


def error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert set(body) >= {"detail", "code"} and body["detail"]
    return body


# --- Who sees which table (R1.1) -----------------------------------------------------------------


def test_r1_1_a_general_sees_and_acts_at_his_own_armys_table_only(game16: Game, api: Api) -> None:
    battle = meet(game16)
    vote(game16, battle, "unicorn-2", "peace")
    lion = army_token(game16, "lion-1")
    rows = api.get(path(game16), token=lion).json()
    assert [r["id"] for r in rows] == [battle.pk]
    row = rows[0]
    assert row["province"] == PROVINCE and row["province_name"]
    votes = {a["code"]: (a["vote"], a["voted"]) for a in row["armies"]}
    assert votes == {"lion-1": (None, False), "unicorn-2": (None, True)}  # others' words hidden
    assert row["you"] == {
        "army": "lion-1",
        "may_vote": True,
        "may_choose_survivors": False,
        "may_correct": False,
    }
    assert "small_farms_total" not in row and "state" not in row

    crab = army_token(game16, "crab-1")
    assert api.get(path(game16), token=crab).json() == []
    body = error(api.get(path(game16, battle), token=crab), 403)
    assert "R1.1" in body["detail"]
    body = error(api.post(path(game16, battle, "/vote"), {"vote": "battle"}, token=crab), 403)
    assert "not at this table" in body["detail"]
    vote(game16, battle, "lion-1", "battle")
    body = error(api.post(path(game16, battle, "/actions"), {"type": "begin"}, token=crab), 403)
    assert "not at this table" in body["detail"]


def test_r1_1_a_refused_look_at_a_table_is_explained_in_the_callers_language(
    game16: Game, api: Api
) -> None:
    battle = meet(game16)
    crab = army_token(game16, "crab-1")

    body = error(api.get(path(game16, battle), token=crab, headers={"Accept-Language": "ru"}), 403)

    assert body["detail"].startswith("вам нельзя смотреть эту битву (R1.1)")


def test_r1_1_a_judge_sees_every_table_with_its_state(
    game16: Game, api: Api, judge_key: str
) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "battle")
    row = api.get(path(game16, battle), token=judge_key).json()
    assert row["state"]["game"] == "l5r"
    assert row["small_farms_total"] == 0
    assert "stronghold" in row["actions"]
    assert row["summary"]["stage"] == "setup"
    listed = api.get(path(game16), token=judge_key).json()
    assert [r["id"] for r in listed] == [battle.pk] and "state" not in listed[0]


def test_r1_1_a_daimyo_with_a_karo_sees_no_battles_his_karo_does(game_karo: Game, api: Api) -> None:
    # Crab: Daimyo and Karo; Crane: a Daimyo without a Karo.
    battle = meet(game_karo, "scorpion-2", "crab-hida")
    crab_daimyo = token(game_karo, game_karo.player("crab", "daimyo"))
    crab_karo = token(game_karo, game_karo.player("crab", "karo"))
    assert api.get(path(game_karo), token=crab_daimyo).json() == []
    error(api.get(path(game_karo, battle), token=crab_daimyo), 403)
    rows = api.get(path(game_karo), token=crab_karo).json()
    assert [r["id"] for r in rows] == [battle.pk]
    assert rows[0]["actions"] == [] and rows[0]["you"]["may_vote"] is False
    body = error(
        api.post(path(game_karo, battle, "/vote"), {"vote": "battle"}, token=crab_karo), 403
    )
    assert "General" in body["detail"]

    crane_daimyo = token(game_karo, game_karo.player("crane", "daimyo"))
    assert api.get(path(game_karo), token=crane_daimyo).json() == []
    move(game_karo, "scorpion-1", "scorpion-soshi")
    resolve(game_karo)
    move(game_karo, "scorpion-1", "crane-kakita")
    resolve(game_karo)
    crane_table = table(game_karo, "crane-kakita")
    rows = api.get(path(game_karo), token=crane_daimyo).json()
    assert [r["id"] for r in rows] == [crane_table.pk]  # R1.1: he watches his clan's battles


def test_r1_1_the_public_sees_nothing_of_battles(game16: Game, api: Api) -> None:
    battle = meet(game16)
    error(api.get(path(game16)), 401)
    error(api.get(path(game16, battle)), 401)
    public = api.get(f"/tournaments/{game16.id}/state").json()
    assert "battle" not in public
    mine = api.get(f"/tournaments/{game16.id}/state", token=army_token(game16, "lion-1")).json()
    assert mine["battle"] == {"id": battle.pk, "status": "meeting", "province": PROVINCE}
    other = api.get(f"/tournaments/{game16.id}/state", token=army_token(game16, "crab-1")).json()
    assert other["battle"] is None


# --- Refusals ----------------------------------------------------------------------------------


def test_bad_battle_requests_are_4xx_naming_the_problem(
    game16: Game, api: Api, judge_key: str
) -> None:
    battle = meet(game16)
    lion = army_token(game16, "lion-1")
    body = error(api.post(path(game16, battle, "/vote"), {"vote": "maybe"}, token=lion), 422)
    assert body["detail"].startswith("vote:")
    body = error(api.post(path(game16, battle, "/vote"), {"vote": "peace"}, token=judge_key), 422)
    assert "army" in body["detail"]
    body = error(api.post(path(game16, battle, "/actions"), {"type": "begin"}, token=lion), 409)
    assert "no battle is being played" in body["detail"]
    body = error(api.post(path(game16, battle, "/result"), {"survivors": []}, token=lion), 403)
    assert "winner" in body["detail"]
    body = error(api.post(path(game16, battle, "/result"), {"survivors": []}, token=judge_key), 409)
    assert "no winner's choice" in body["detail"]

    vote(game16, battle, "lion-1", "battle")
    error(api.post(path(game16, battle, "/actions"), {}, token=lion), 422)
    body = error(api.post(path(game16, battle, "/actions"), {"type": "begin"}, token=lion), 422)
    assert body["code"] == "illegal_action" and "stronghold" in body["detail"]
    body = error(
        api.post(path(game16, battle, "/actions"), {"type": "honor", "delta": "x"}, token=lion),
        422,
    )
    huge = {"type": "honor", "note": "x" * 5000}
    body = error(api.post(path(game16, battle, "/actions"), huge, token=lion), 422)
    assert "4096 bytes" in body["detail"]
    body = error(api.post(path(game16, battle, "/actions"), ["begin"], token=lion), 422)

    correction = {"kind": "truce", "survivors": [], "reason": "slip"}
    body = error(api.post(path(game16, battle, "/correct"), correction, token=lion), 403)
    assert "judge" in body["detail"]
    body = error(api.post(path(game16, battle, "/correct"), correction, token=judge_key), 409)
    assert "ended battle" in body["detail"]
    body = error(
        api.post(path(game16, battle, "/correct"), {**correction, "kind": "win"}, token=judge_key),
        422,
    )
    assert "winner" in body["detail"]

    error(api.get(f"/tournaments/{game16.id}/battles/999999", token=judge_key), 404)
    error(api.get(f"/tournaments/999999/battles/{battle.pk}", token=judge_key), 404)
    error(api.get(f"/tournaments/{game16.id}/battles/abc", token=judge_key), 422)


def test_a_battle_of_another_tournament_is_not_found(
    game16: Game, make_game: Any, api: Api, judge_key: str
) -> None:
    battle = meet(game16)
    other = make_game(16, name="Another")
    error(api.get(f"/tournaments/{other.id}/battles/{battle.pk}", token=judge_key), 404)
    lion = army_token(game16, "lion-1")
    body = error(
        api.post(
            f"/tournaments/{other.id}/battles/{battle.pk}/vote", {"vote": "peace"}, token=lion
        ),
        404,
    )
    assert "no battle" in body["detail"]


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"orders": "2/min"})
def test_actions_at_a_table_are_rate_limited_like_orders(game16: Game, api: Api) -> None:
    battle = meet(game16)
    lion = army_token(game16, "lion-1")
    for _ in range(2):
        assert (
            api.post(path(game16, battle, "/vote"), {"vote": "peace"}, token=lion).status_code
            == 200
        )
    response = api.post(path(game16, battle, "/vote"), {"vote": "peace"}, token=lion)
    assert error(response, 429)["code"] == "rate_limited"
    assert response["Retry-After"]


def test_a_judge_acts_as_judge_or_for_a_seated_army(game16: Game, api: Api, judge_key: str) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "battle")
    stronghold = {"type": "stronghold", "honor": 5, "province_strength": 5, "gold": 5}
    row = api.post(
        path(game16, battle, "/actions"), {**stronghold, "army": "lion-1"}, token=judge_key
    ).json()
    honors = {p["army"]: p["honor"] for p in row["summary"]["players"]}
    assert honors == {"lion-1": 5, "unicorn-2": None}
    row = api.post(
        path(game16, battle, "/actions"), {**stronghold, "by": "unicorn-2"}, token=judge_key
    ).json()
    assert {p["army"]: p["honor"] for p in row["summary"]["players"]}["unicorn-2"] == 5
    body = error(
        api.post(path(game16, battle, "/actions"), {**stronghold, "by": "crab-1"}, token=judge_key),
        422,
    )
    assert body["detail"].startswith("by:")
