"""Battle tables on top of the referees' test games (``tests/referees/conftest.py``).

On the bundled map with two Generals per clan (``game16``): ``lion-1`` starts in
``lion-akodo`` (a Lion castle), ``unicorn-2`` next door in ``unicorn-shinjo`` and ``dragon-1``
in ``dragon-mirumoto``, both bordering ``lion-akodo``. ``meet(game)`` marches ``unicorn-2``
into ``lion-akodo`` and resolves the turn: a meeting of Lion and Unicorn (R7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils import timezone

from battles import services as battle_services
from battles.models import OPEN_STATUSES, Battle
from referees import services
from referees.models import Player
from referees.services import OrderInput
from tests.referees.conftest import (  # noqa: F401  (fixtures)
    Api,
    Game,
    _clear_cache,
    api,
    game16,
    game24,
    game_karo,
    game_mixed,
    judge_key,
    judge_user,
    make_game,
    other_user,
    rokugan,
)

PROVINCE = "lion-akodo"


def resolve(game: Game) -> None:
    """The judge resolves the open turn now."""
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


def move(game: Game, army: str, *path: str) -> None:
    """A paper move order for ``army``, entered by the judge."""
    services.order_enter(
        tournament_id=game.id,
        army_code=army,
        order=OrderInput(kind="move", path=tuple(path)),
        actor=game.judge_actor,
        now=timezone.now(),
    )


def general(game: Game, army: str) -> Player:
    return Player.objects.select_related("army", "tournament").get(
        tournament=game.tournament, army__code=army
    )


def table(game: Game, province: str = PROVINCE) -> Battle:
    """The open table in ``province``."""
    return Battle.objects.get(
        tournament=game.tournament, province=province, status__in=OPEN_STATUSES
    )


def meet(game: Game, army: str = "unicorn-2", to: str = PROVINCE) -> Battle:
    """``army`` marches into ``to`` and the turn is resolved: the meeting's table."""
    move(game, army, to)
    resolve(game)
    return table(game, to)


def vote(game: Game, battle: Battle, army: str, word: str) -> Battle:
    return battle_services.meeting_vote(
        battle_id=battle.pk,
        army_code=army,
        vote=word,
        actor=general(game, army),
        now=timezone.now(),
    )


def act(game: Game, battle: Battle, by: str | None, **action: Any) -> Battle:
    """One action at the table, by ``by``'s General (None: by the judge)."""
    actor = game.judge_actor if by is None else general(game, by)
    return battle_services.battle_act(
        battle_id=battle.pk, action=action, actor=actor, now=timezone.now()
    )


def begin(game: Game, battle: Battle, honors: Mapping[str, int] | None = None) -> Battle:
    """Every General enters his stronghold (R13 set-up), then the battle begins."""
    battle.refresh_from_db()
    for player in battle.state["players"]:
        army = player["army"]
        honor = (honors or {}).get(army, 5)
        act(game, battle, army, type="stronghold", honor=honor, province_strength=5, gold=5)
    return act(game, battle, None, type="begin")


def lose_provinces(game: Game, battle: Battle, army: str) -> Battle:
    """``army`` loses his four provinces, one by one (R13: no provinces left loses)."""
    for _ in range(3):
        battle = act(game, battle, army, type="province", army=army, delta=-1)
    # R8: the last one ends the game for him, so he confirms it.
    return act(game, battle, army, type="province", army=army, delta=-1, confirm=True)


def fight(game: Game, battle: Battle, armies: Sequence[str] = ("lion-1", "unicorn-2")) -> Battle:
    """Open the battle with a vote for it (R7) and begin the game."""
    vote(game, battle, armies[0], "battle")
    return begin(game, battle)
