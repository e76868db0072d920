"""Orders through the API (R4): a General's own, and a judge's on a General's behalf."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from referees import services
from referees.models import LogEntry, Player, Tournament
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Order
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

MOVE = {"kind": "move", "path": ["shinomen-mori"]}  # crab-1 starts in crab-hida


def mine(game: Game) -> str:
    return f"/tournaments/{game.id}/orders/mine"


def test_a_general_gives_an_order(api: Api, game16: Game) -> None:
    general = game16.player("crab")

    response = api.put(mine(game16), MOVE, token=game16.token(general))

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["army"] == "crab-1"
    assert body["kind"] == "move"
    assert body["path"] == ["shinomen-mori"]
    assert body["turn"] == 1
    assert body["by_judge"] is False
    order = Order.objects.get()
    assert order.author == "general Crab general 1 (crab)"
    entry = LogEntry.objects.get(action="order_given")
    assert entry.actor == order.author
    assert entry.data["army"] == "crab-1"


def test_a_general_changes_his_order_and_the_last_counts(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    api.put(mine(game16), MOVE, token=token)

    response = api.put(mine(game16), {"kind": "hold", "claim": False}, token=token)

    assert response.status_code == 200
    orders = api.get(f"/tournaments/{game16.id}/state", token=token).json()["orders"]
    assert [(o["army"], o["kind"], o["claim"]) for o in orders] == [("crab-1", "hold", False)]
    assert Order.objects.count() == 2  # rows are kept for the record


def test_a_general_withdraws_his_order(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    api.put(mine(game16), MOVE, token=token)

    response = api.delete(mine(game16), token=token)

    assert response.status_code == 200
    assert response.json()["kind"] == "withdraw"
    assert api.get(f"/tournaments/{game16.id}/state", token=token).json()["orders"] == []
    assert LogEntry.objects.filter(action="order_withdrawn").count() == 1


@pytest.mark.parametrize(
    ("order", "code"),
    [
        ({"kind": "move", "path": ["unicorn-utaku"]}, "not_adjacent"),
        ({"kind": "move", "path": ["atlantis"]}, "unknown_province"),
        ({"kind": "move", "path": ["shinomen-mori", "seppun"]}, "not_unicorn"),
        ({"kind": "reform", "reform": "crab-kaiu"}, "not_destroyed"),
    ],
)
def test_an_illegal_order_is_422_with_the_reason_and_not_stored(
    api: Api, game16: Game, order: dict[str, object], code: str
) -> None:
    response = api.put(mine(game16), order, token=game16.token(game16.player("crab")))

    assert response.status_code == 422
    assert response.json()["code"] == code
    assert response.json()["detail"]
    assert not Order.objects.exists()


@pytest.mark.parametrize(
    ("order", "field"),
    [
        ({"kind": "move"}, "path"),
        ({"kind": "reform"}, "reform"),
        ({"kind": "withdraw"}, "kind"),
        ({"kind": "hold", "on_swap": "flee"}, "on_swap"),
        ({"kind": "move", "path": "shinomen-mori"}, "path"),
        ({}, "kind"),
    ],
)
def test_a_malformed_order_is_422_naming_the_field(
    api: Api, game16: Game, order: dict[str, object], field: str
) -> None:
    response = api.put(mine(game16), order, token=game16.token(game16.player("crab")))

    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation"
    assert body["detail"].startswith(f"{field}: ")
    assert body["errors"][0]["field"] == field
    assert not Order.objects.exists()


def test_a_late_order_is_409_and_not_stored(api: Api, game16: Game) -> None:
    """R4: after the deadline the order is not carried out (nor stored)."""
    Tournament.objects.filter(pk=game16.id).update(deadline=timezone.now() - timedelta(seconds=1))

    response = api.put(mine(game16), MOVE, token=game16.token(game16.player("crab")))

    assert response.status_code == 409
    assert response.json()["code"] == "late"
    assert not Order.objects.exists()


def test_orders_wait_for_the_turns(api: Api, make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="negotiation")

    response = api.put(mine(game), MOVE, token=game.token(game.player("crab")))

    assert response.status_code == 409
    assert response.json()["code"] == "not_running"


def test_a_general_may_not_order_another_clans_army(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.put(
        f"/tournaments/{game16.id}/armies/crane-1/order", {"kind": "hold"}, token=token
    )

    assert response.status_code == 403
    assert not Order.objects.exists()


def test_a_general_may_not_order_in_another_tournament(
    api: Api, game16: Game, make_game: Callable[..., Game]
) -> None:
    other = make_game(16, name="Other")

    response = api.put(mine(other), MOVE, token=game16.token(game16.player("crab")))

    assert response.status_code == 403
    assert not Order.objects.exists()


def test_a_daimyo_cannot_give_orders(api: Api, game24: Game) -> None:
    response = api.put(
        mine(game24), {"kind": "hold"}, token=game24.token(game24.player("crab", "daimyo"))
    )

    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    assert not Order.objects.exists()


def test_a_karo_cannot_give_orders(api: Api, game_karo: Game) -> None:
    response = api.put(
        mine(game_karo),
        {"kind": "hold"},
        token=game_karo.token(game_karo.player("crab", "karo")),
    )

    assert response.status_code == 403
    assert not Order.objects.exists()


def test_anonymous_cannot_give_orders(api: Api, game16: Game) -> None:
    response = api.put(mine(game16), MOVE)

    assert response.status_code == 401
    assert not Order.objects.exists()


def test_a_judge_enters_an_order_and_the_record_names_him(
    api: Api, game16: Game, judge_key: str
) -> None:
    """R4: a paper order entered by a judge shows who entered it and when."""
    response = api.put(f"/tournaments/{game16.id}/armies/crab-1/order", MOVE, token=judge_key)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["by_judge"] is True
    assert body["given_by"] == "judge judge"
    entry = LogEntry.objects.get(action="order_given")
    assert entry.actor == "judge judge"
    assert entry.data["army"] == "crab-1"
    assert entry.at is not None


def test_a_judge_withdraws_an_order(api: Api, game16: Game, judge_key: str) -> None:
    path = f"/tournaments/{game16.id}/armies/crab-1/order"
    api.put(path, MOVE, token=judge_key)

    response = api.delete(path, token=judge_key)

    assert response.status_code == 200
    assert response.json()["kind"] == "withdraw"


def test_a_judge_ordering_an_unknown_army_gets_404(api: Api, game16: Game, judge_key: str) -> None:
    response = api.put(
        f"/tournaments/{game16.id}/armies/mantis-1/order", {"kind": "hold"}, token=judge_key
    )

    assert response.status_code == 404
    assert "mantis-1" in response.json()["detail"]


def test_r5_3_daimyo_decides_where_his_scorpions_swap_battle_is_fought(
    game24: Game, api: Api
) -> None:
    """R5.3: in a clan with a Daimyo, the Daimyo sets ``on_swap`` on the General's move."""
    general = game24.player("scorpion")
    daimyo = game24.player("scorpion", "daimyo")
    code = general.army.code
    here = game24.province_of(code)
    target = sorted(rokugan_map().neighbours[here])[0]
    assert (
        api.put(
            f"/tournaments/{game24.id}/orders/mine",
            {"kind": "move", "path": [target]},
            token=game24.token(general),
        ).status_code
        == 200
    )
    response = api.put(
        f"/tournaments/{game24.id}/armies/{code}/on-swap",
        {"on_swap": "stay"},
        token=game24.token(daimyo),
    )
    assert response.status_code == 200, response.content
    assert response.json()["on_swap"] == "stay" and response.json()["path"] == [target]
    other = game24.player("crab", "daimyo")
    refused = api.put(
        f"/tournaments/{game24.id}/armies/{code}/on-swap",
        {"on_swap": "advance"},
        token=game24.token(other),
    )
    assert refused.status_code == 404
    by_general = api.put(
        f"/tournaments/{game24.id}/armies/{code}/on-swap",
        {"on_swap": "advance"},
        token=game24.token(general),
    )
    assert by_general.status_code == 403


def test_r4_an_order_for_a_turn_already_resolved_is_late_not_carried_over(
    game16: Game, api: Api
) -> None:
    """An order naming the turn it was given for is refused once that turn is resolved."""
    general = game16.player("crab")
    services_now = timezone.now()
    from referees import services

    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=services_now)
    response = api.put(
        f"/tournaments/{game16.id}/orders/mine",
        {"kind": "move", "path": ["crab-hiruma"], "turn": 1},
        token=game16.token(general),
    )
    assert response.status_code == 409 and response.json()["code"] == "late"
    assert not Order.objects.exists()
    ok = api.put(
        f"/tournaments/{game16.id}/orders/mine",
        {"kind": "move", "path": ["crab-hiruma"], "turn": 2},
        token=game16.token(general),
    )
    assert ok.status_code == 200, ok.content


def _unicorn_destroyed_and_utaku_taken(game: Game) -> tuple[str, str]:
    """Turn 2 open; the first Unicorn army was destroyed by the winner in turn 1, so it may
    reform now (R9), and the Lion hold Shiro Utaku (the other Unicorn army holds Shinjo).
    Its General's token and army."""
    general = game.player("unicorn")
    assert general.army is not None
    now = timezone.now()
    services.army_correct(
        tournament_id=game.id,
        army_code=general.army.code,
        province=None,
        destroyed_by="winner",
        reason="lost a battle",
        actor=game.judge_actor,
        now=now,
    )
    services.control_correct(
        tournament_id=game.id,
        province="unicorn-utaku",
        clan="lion",
        reason="taken",
        actor=game.judge_actor,
        now=now,
    )
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=now, turn=1)
    return game.token(general), general.army.code


def test_r1_1_a_general_under_a_daimyo_is_not_told_which_castles_his_clan_lost(
    api: Api, game24: Game
) -> None:
    # given: a Unicorn General under a Daimyo sees no province beyond his (destroyed) army's
    token, _army = _unicorn_destroyed_and_utaku_taken(game24)

    # when: he tries to reform in the castle the Lion took, and in the one still Unicorn
    taken = api.put(mine(game24), {"kind": "reform", "reform": "unicorn-utaku"}, token=token)
    held = api.put(mine(game24), {"kind": "reform", "reform": "unicorn-shinjo"}, token=token)

    # then: both answers are alike; what he may not see does not decide them
    assert (taken.status_code, held.status_code) == (200, 200), (taken.content, held.content)
    assert (
        "unicorn-utaku"
        not in api.get(f"/tournaments/{game24.id}/state", token=token).json()["control"]
    )


def test_r9_the_turn_rejects_a_reform_in_a_lost_castle_and_tells_the_general_why(
    api: Api, game24: Game
) -> None:
    # given
    token, army = _unicorn_destroyed_and_utaku_taken(game24)
    api.put(mine(game24), {"kind": "reform", "reform": "unicorn-utaku"}, token=token)

    # when: the deadline
    services.clock_resolve_now(
        tournament_id=game24.id, actor=game24.judge_actor, now=timezone.now(), turn=2
    )

    # then: not reformed, and his page reads why
    state = api.get(f"/tournaments/{game24.id}/state", token=token).json()
    assert state["last_order"] == {
        "turn": 2,
        "reason_code": "not_controlled",
        "reason": "the army's clan does not control that province",
    }
    assert next(a for a in state["armies"] if a["id"] == army)["destroyed"] is True


def test_a_general_who_sees_the_map_is_refused_a_reform_in_a_lost_castle_at_once(
    api: Api, game16: Game
) -> None:
    # given: no Daimyo in the clan, so the General sees the whole map (R1.1)
    token, _army = _unicorn_destroyed_and_utaku_taken(game16)

    # when
    response = api.put(mine(game16), {"kind": "reform", "reform": "unicorn-utaku"}, token=token)

    # then
    assert response.status_code == 422
    assert response.json()["code"] == "not_controlled"


def test_r1_1_a_daimyo_named_mid_turn_hides_the_map_at_the_generals_very_next_order(
    api: Api, game16: Game
) -> None:
    # given: no Daimyo, so the General sees the map and is refused the lost castle at once;
    # that order read the tournament's frame (referees/services/order_frame.py)
    token, _army = _unicorn_destroyed_and_utaku_taken(game16)
    order = {"kind": "reform", "reform": "unicorn-utaku"}
    assert api.put(mine(game16), order, token=token).status_code == 422

    # when: the clan's other player is made its Daimyo outside any service (the admin site)
    other = game16.player("unicorn", n=2)
    other.role = Player.Role.DAIMYO
    other.save()

    # then: the next order is checked as R1.1 has it for a clan with a Daimyo, not by the
    # frame read before: what he may no longer see does not decide it
    answer = api.put(mine(game16), order, token=token)
    assert answer.status_code == 200, answer.content
