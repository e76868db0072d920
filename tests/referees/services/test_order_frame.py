"""What an order is checked against is read once per frame (referees/services/order_frame.py),
and never outlives the change that makes it old (R1, R1.1, R4).

A process keeps each tournament's players, open turn and board between orders, for as long
as ``Campaign.frame_version`` stays; it keeps the turn's latest orders for as long as
``Campaign.version`` stays, moving them on with its own commits. These tests change what a
frame holds in each way the site can — a service, a row saved outside any service, another
process's order — and check that the very next order sees the change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections, transaction
from django.db.models import F
from django.utils import timezone

from referees import services
from referees.kernel.core import TournamentError
from referees.kernel.tokens import PlayerClaim, token_claim
from referees.models import LogEntry, Player
from referees.services import OrderInput
from referees.services.orders import ClaimedOrder, orders_give
from strategic_map.models import Campaign, Order
from tests.event_capture import IN_MEMORY_LAYERS, OnCommitCapture, effects_of
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

CRAB_MOVE = {"kind": "move", "path": ["shinomen-mori"]}


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYERS


def mine(game: Game) -> str:
    return f"/tournaments/{game.id}/orders/mine"


def frame_version(game: Game) -> int:
    return int(Campaign.objects.get(tournament=game.id).frame_version)


def claim_of(game: Game, player: Player) -> PlayerClaim:
    claim = token_claim(game.token(player))
    assert claim is not None
    return claim


def committed(on_commit: OnCommitCapture, operation: Callable[[], Any]) -> Any:
    """Run ``operation`` and its on-commit work, as a request's transaction would."""
    with on_commit(execute=True):
        return operation()


def test_r1_a_join_link_revoked_after_an_order_is_refused_at_the_next_order(
    api: Any, game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    first = committed(
        django_capture_on_commit_callbacks, lambda: api.put(mine(game16), CRAB_MOVE, token=token)
    )
    assert first.status_code == 200, first.content

    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())
    again = api.put(mine(game16), {"kind": "hold"}, token=token)

    assert again.status_code == 401, again.content
    assert again.json()["code"] == "bad_token"
    assert list(Order.objects.values_list("kind", flat=True)) == ["move"]


def test_r1_a_reissued_join_link_works_at_once_and_the_old_one_does_not(
    api: Any, game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    general = game16.player("crab")
    old = game16.token(general)
    committed(
        django_capture_on_commit_callbacks, lambda: api.put(mine(game16), CRAB_MOVE, token=old)
    )

    new = services.player_token_reissue(
        player=general, actor=game16.judge_actor, now=timezone.now()
    )

    assert api.put(mine(game16), {"kind": "hold"}, token=old).status_code == 401
    answer = api.put(mine(game16), {"kind": "hold"}, token=new)
    assert answer.status_code == 200, answer.content


def test_a_token_of_another_tournaments_player_is_refused_with_403(
    api: Any, game16: Game, game24: Game
) -> None:
    stranger = game24.player("crab")
    answer = api.put(mine(game16), CRAB_MOVE, token=game24.token(stranger))
    assert answer.status_code == 403, answer.content
    assert not Order.objects.exists()


def test_a_player_row_saved_outside_any_service_starts_a_new_frame(game16: Game) -> None:
    """The admin site or a shell: no announcement, yet the next order must not trust the
    frame kept before."""
    before = frame_version(game16)
    player = game16.player("crab")
    player.name = "Hida Kisada"
    player.save()
    assert frame_version(game16) == before + 1


def test_orders_keep_the_frame_and_every_other_change_renews_it(game16: Game) -> None:
    before = frame_version(game16)
    services.order_give(
        player=game16.player("crab"),
        order=OrderInput("move", ("shinomen-mori",)),
        now=timezone.now(),
    )
    assert frame_version(game16) == before, "an order changes nothing an order is checked against"

    services.clock_pause(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())
    assert frame_version(game16) == before + 1


def another_process_stores_the_move_then_it_comes_here(
    game: Game, commit: Callable[[Callable[[], Any]], Any]
) -> None:
    """Lion's General holds (committed here: this process's frame knows the turn's orders);
    another server process stores crab-1's move and moves the version on; the same move
    then arrives here."""
    general = game.player("crab")
    commit(
        lambda: services.order_give(
            player=game.player("lion"), order=OrderInput("hold"), now=timezone.now()
        )
    )
    turn = Order.objects.get().turn
    with transaction.atomic():  # what the other process wrote, as order_give writes it
        Order.objects.create(
            turn=turn,
            army=general.army,
            kind="move",
            path=["shinomen-mori"],
            created_at=timezone.now(),
            author=f"general {general.name} (crab)",
        )
        Campaign.objects.filter(tournament=game.id).update(version=F("version") + 1)
    commit(
        lambda: services.order_give(
            player=general, order=OrderInput("move", ("shinomen-mori",)), now=timezone.now()
        )
    )


def test_r4_an_order_stored_by_another_process_is_seen_by_the_next_repeat_check(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    """The same move arriving here is the same order again, not a second one."""
    another_process_stores_the_move_then_it_comes_here(
        game16, lambda operation: committed(django_capture_on_commit_callbacks, operation)
    )

    assert Order.objects.filter(army=game16.player("crab").army).count() == 1


@pytest.mark.django_db(transaction=True)
def test_r4_the_repeat_check_holds_when_each_order_commits_in_its_own_transaction(
    game16: Game,
) -> None:
    """As a server runs them: on PostgreSQL the orders' writes go with their COMMIT and the
    new rows' keys are set after it (referees/kernel/core.py, ``unit_writes_pipelined``); the
    frame's orders, keys included, must still be exact for the next repeat check."""
    another_process_stores_the_move_then_it_comes_here(game16, lambda operation: operation())

    crab = game16.player("crab")
    assert Order.objects.filter(army=crab.army).count() == 1
    assert LogEntry.objects.filter(action="order_given").count() == 1  # Lion's alone


def test_r4_orders_given_together_are_each_answered_and_stored_as_one_change(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    crab, lion, crane = (game16.player(c) for c in ("crab", "lion", "crane"))
    now = timezone.now()
    requests = [
        ClaimedOrder(
            game16.id, claim_of(game16, crab), OrderInput("move", ("shinomen-mori",)), now
        ),
        ClaimedOrder(game16.id, PlayerClaim(crab.pk, "forged"), OrderInput("hold"), now),
        ClaimedOrder(game16.id, claim_of(game16, lion), OrderInput("move", ("crab-hida",)), now),
        ClaimedOrder(game16.id, claim_of(game16, crane), OrderInput("hold"), now),
        ClaimedOrder(
            game16.id, claim_of(game16, crab), OrderInput("move", ("shinomen-mori",)), now
        ),
    ]

    effects = effects_of(
        tournament_id=game16.id,
        operation=lambda: orders_give(requests=requests),
        on_commit=django_capture_on_commit_callbacks,
    )

    answers = [r.answer for r in requests]
    assert isinstance(answers[0], Order) and answers[0].army_id == crab.army_id
    assert isinstance(answers[1], TournamentError) and answers[1].code == "bad_token"
    assert isinstance(answers[2], TournamentError) and answers[2].code == "not_adjacent"
    assert isinstance(answers[3], Order) and answers[3].army_id == crane.army_id
    assert answers[4] is answers[0], "the same order again is the one stored"
    assert Order.objects.count() == 2
    assert LogEntry.objects.filter(action="order_given").count() == 2
    assert effects.version_bumps == 1
    assert [m["kind"] for m in effects.delivered.main] == ["order"]


@pytest.mark.django_db(transaction=True)
def test_r4_orders_sent_at_the_same_moment_from_many_threads_are_all_stored(
    game16: Game, settings: Any
) -> None:
    """The group commit: each request gets its own order back, and every one is stored."""
    generals = [p for p in game16.players if p.role == "general"]
    claims = [(p, claim_of(game16, p)) for p in generals]
    barrier = threading.Barrier(len(claims))
    answers: dict[int, Order | BaseException] = {}

    def give(player: Player, claim: PlayerClaim) -> None:
        barrier.wait()
        try:
            answers[player.pk] = services.order_give_claimed(
                tournament_id=game16.id, claim=claim, order=OrderInput("hold"), now=timezone.now()
            )
        except BaseException as failure:  # reported below, not lost in the thread
            answers[player.pk] = failure
        finally:
            connections.close_all()

    threads = [threading.Thread(target=give, args=pc) for pc in claims]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    for player, _claim in claims:
        answer = answers[player.pk]
        assert isinstance(answer, Order), answer
        assert answer.army_id == player.army_id
    stored = dict(Order.objects.values_list("army_id", "kind"))
    assert stored == {p.army_id: "hold" for p in generals}
