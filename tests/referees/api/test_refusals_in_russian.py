"""What the services refuse comes back in the caller's language (English by default).

The API's ``detail`` is translated where the service raises it (the request's language is
active there); the ``code`` is the same in every language.
"""

from __future__ import annotations

import pytest
from django.utils import timezone, translation

from referees import services
from referees.texts.words import order_refusal_text
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

RU = {"Accept-Language": "ru"}
NOT_NEXT = {"kind": "move", "path": ["unicorn-utaku"]}  # crab-1 starts in crab-hida


def mine(game: Game) -> str:
    return f"/tournaments/{game.id}/orders/mine"


def turn_1_resolved(game: Game) -> None:
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


def test_a_late_order_is_refused_in_russian(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    turn_1_resolved(game16)

    response = api.put(mine(game16), {"kind": "hold", "turn": 1}, token=token, headers=RU)

    assert response.status_code == 409
    assert response.json() == {
        "detail": "поздно: ход 1 уже завершён; приказ не сохранён",
        "code": "late",
    }


def test_a_late_order_is_refused_in_english_by_default(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    turn_1_resolved(game16)

    response = api.put(mine(game16), {"kind": "hold", "turn": 1}, token=token)

    assert response.json()["detail"] == "late: turn 1 has been resolved; the order was not stored"


def test_an_illegal_order_is_refused_in_russian(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.put(mine(game16), NOT_NEXT, token=token, headers=RU)

    assert response.status_code == 422
    assert response.json() == {
        "detail": "эта провинция не граничит с провинцией армии",
        "code": "not_adjacent",
    }


def test_an_illegal_order_keeps_the_engines_words_in_english(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.put(mine(game16), NOT_NEXT, token=token)

    detail = response.json()["detail"]
    assert response.json()["code"] == "not_adjacent"
    assert detail != "that province is not next to the army"
    assert "Utaku" in detail  # the engine names the province


def test_a_judges_refusal_is_in_russian(api: Api, game16: Game, judge_key: str) -> None:
    response = api.post(f"/tournaments/{game16.id}/clock/resume", token=judge_key, headers=RU)

    assert response.status_code == 409
    assert response.json() == {"detail": "часы не на паузе", "code": "not_paused"}


def test_an_unknown_tournament_is_named_in_russian(api: Api, judge_key: str, db: None) -> None:
    response = api.post("/tournaments/987654/clock/pause", token=judge_key, headers=RU)

    assert response.status_code == 404
    assert response.json()["detail"] == "турнира 987654 нет"


def test_an_order_refusal_text_without_a_known_code_stays_as_the_engine_said() -> None:
    with translation.override("ru"):
        assert order_refusal_text("mystery", "mystery words") == "mystery words"
        assert order_refusal_text("in_battle", "the army is in a battle; …") == (
            "армия участвует в битве"
        )
    with translation.override("en"):
        assert order_refusal_text("in_battle", "the army is in a battle; …") == (
            "the army is in a battle; …"
        )
