"""R9 on the General's page: from which turn a destroyed army may reform, and where.

The state tells the General of a destroyed army (and no one else) the first turn it may
reform in and the castles it could reform in, as the engine decides them.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from referees import services
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def _destroy(game: Game, army: str, destroyed_by: str = "loss") -> None:
    services.army_correct(
        tournament_id=game.id,
        army_code=army,
        province=None,
        destroyed_by=destroyed_by,
        reason="lost a battle",
        actor=game.judge_actor,
        now=timezone.now(),
    )


def _resolve(game: Game, turn: int) -> None:
    services.clock_resolve_now(
        tournament_id=game.id, actor=game.judge_actor, now=timezone.now(), turn=turn
    )


def _state(api: Api, game: Game, token: str | None = None) -> dict:  # type: ignore[type-arg]
    answer = api.get(f"/tournaments/{game.id}/state", token=token)
    assert answer.status_code == 200, answer.content
    return answer.json()  # type: ignore[no-any-return]


def test_r9_a_loser_is_told_he_may_reform_from_turn_t_plus_2(api: Api, game16: Game) -> None:
    general = game16.player("crab")
    assert general.army is not None
    _destroy(game16, general.army.code)
    _resolve(game16, 1)

    reform = _state(api, game16, game16.token(general))["reform"]

    assert reform["from_turn"] == 3
    assert reform["provinces"] == ["crab-hida", "crab-kaiu"]
    assert reform["home_castles"] == ["crab-hida", "crab-kaiu"]


def test_r9_an_army_destroyed_by_the_winner_may_reform_from_t_plus_1(
    api: Api, game16: Game
) -> None:
    general = game16.player("crab")
    assert general.army is not None
    _destroy(game16, general.army.code, "winner")

    assert _state(api, game16, game16.token(general))["reform"]["from_turn"] == 2


def test_r9_a_clan_without_its_home_castles_is_offered_no_castle(api: Api, game16: Game) -> None:
    general = game16.player("crab")
    assert general.army is not None
    _destroy(game16, general.army.code, "winner")
    services.army_correct(  # the other Crab army leaves Kaiu, so nobody retakes it
        tournament_id=game16.id,
        army_code="crab-2",
        province="shinomen-mori",
        reason="moved",
        actor=game16.judge_actor,
        now=timezone.now(),
    )
    for castle in ("crab-hida", "crab-kaiu"):
        services.control_correct(
            tournament_id=game16.id,
            province=castle,
            clan="lion",
            reason="taken",
            actor=game16.judge_actor,
            now=timezone.now(),
        )
    _resolve(game16, 1)

    reform = _state(api, game16, game16.token(general))["reform"]

    assert reform["provinces"] == []
    assert reform["home_castles"] == ["crab-hida", "crab-kaiu"]


def test_r1_1_the_reform_answer_is_for_that_general_alone(
    api: Api, game16: Game, judge_key: str
) -> None:
    destroyed = game16.player("crab")
    assert destroyed.army is not None
    _destroy(game16, destroyed.army.code)

    assert "reform" not in _state(api, game16, game16.token(game16.player("crab", n=2)))
    assert "reform" not in _state(api, game16, game16.token(game16.player("lion")))
    assert "reform" not in _state(api, game16)  # the public
    assert "reform" not in _state(api, game16, judge_key)  # the judge has the board itself
    assert "reform" in _state(api, game16, game16.token(destroyed))


def test_r1_1_a_general_under_a_daimyo_is_offered_the_castles_he_knows_of(
    api: Api, game24: Game
) -> None:
    general = game24.player("unicorn")
    assert general.army is not None
    _destroy(game24, general.army.code, "winner")
    services.control_correct(
        tournament_id=game24.id,
        province="unicorn-utaku",
        clan="lion",
        reason="taken",
        actor=game24.judge_actor,
        now=timezone.now(),
    )
    _resolve(game24, 1)

    reform = _state(api, game24, game24.token(general))["reform"]

    # He may not see who holds Shiro Utaku now: the deadline tells him, as for any order.
    assert "unicorn-utaku" in reform["provinces"]


def test_r9_r1_1_the_daimyo_sees_where_each_destroyed_general_may_reform(
    api: Api, game24: Game
) -> None:
    """Issue 30: a General under a Daimyo was offered a castle his clan had lost, lost a
    turn to the refusal and was offered it again. He is told he cannot know (R1.1) and to
    ask; his Daimyo sees each destroyed General's reform turn and the castles it really has."""
    general = game24.player("unicorn")
    assert general.army is not None
    code = general.army.code
    _destroy(game24, code, "winner")
    services.control_correct(
        tournament_id=game24.id,
        province="unicorn-utaku",
        clan="lion",
        reason="taken",
        actor=game24.judge_actor,
        now=timezone.now(),
    )
    _resolve(game24, 1)

    told = _state(api, game24, game24.token(general))["reform"]
    daimyo = _state(api, game24, game24.token(game24.player("unicorn", "daimyo")))
    lion_daimyo = _state(api, game24, game24.token(game24.player("lion", "daimyo")))

    assert told["sees_map"] is False and "unicorn-utaku" in told["provinces"]
    known = daimyo["clan_reforms"][code]
    assert known["sees_map"] is True
    assert "unicorn-utaku" not in known["provinces"]  # taken: not offered where it is known
    assert known["from_turn"] == told["from_turn"]
    assert set(known["provinces"]) < set(told["provinces"])
    assert code not in lion_daimyo["clan_reforms"]  # another clan's Daimyo learns nothing
    general_page = api.get(f"/tournaments/{game24.id}/state", token=game24.token(general)).json()
    assert "clan_reforms" not in general_page
