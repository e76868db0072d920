"""Turn resolution on the stored board: exactly once, constant queries, undo (R4-R9)."""

from __future__ import annotations

import random
from datetime import datetime

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sl5r.rules.casefile import case_from_dict, case_run, expect_differences, result_to_dict
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Army, Campaign, Order, Turn
from strategic_map.selectors import campaign_turn_state, turn_current_orders
from strategic_map.services import (
    OrderRefused,
    army_create,
    board_place,
    campaign_create,
    map_import,
    order_checked,
    turn_open,
    turn_resolve,
    turn_undo,
)

pytestmark = pytest.mark.django_db


def now() -> datetime:
    return timezone.now()


def campaign_with(placements: dict[str, str | None]) -> Campaign:
    game_map = map_import(slug="rokugan", data=rokugan_map().to_dict())
    campaign = campaign_create(game_map=game_map)
    for code, province in placements.items():
        army = army_create(campaign=campaign, code=code, clan=code.split("-")[0])
        board_place(campaign=campaign, army=army, province=province, destroyed_in_turn=1)
    campaign.save()
    return campaign


def army(campaign: Campaign, code: str) -> Army:
    return Army.objects.get(campaign=campaign, code=code)


def give(turn: Turn, campaign: Campaign, code: str, kind: str = "move", **fields: object) -> Order:
    order = order_checked(
        turn=turn, army=army(campaign, code), kind=kind, author="test", now=now(), **fields
    )
    order.save()
    return order


def resolve(turn: Turn, seed: int = 1) -> Turn | None:
    with transaction.atomic():
        return turn_resolve(turn_id=turn.pk, now=now(), by="test", rng=random.Random(seed))


def test_r4_latest_order_counts_and_withdrawal_removes_it() -> None:
    campaign = campaign_with({"crab-1": "crab-hida"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(turn, campaign, "crab-1", path=["crab-hiruma"])
    give(turn, campaign, "crab-1", path=["crab-kaiu"])
    assert [o.path for o in turn_current_orders(turn).values()] == [["crab-kaiu"]]
    give(turn, campaign, "crab-1", kind="withdraw")
    assert turn_current_orders(turn) == {}
    assert Order.objects.filter(turn=turn).count() == 3  # every order stays on record


def test_r4_illegal_order_is_refused_with_the_engine_reason_and_not_stored() -> None:
    campaign = campaign_with({"crab-1": "crab-hida"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    with pytest.raises(OrderRefused) as refused:
        give(turn, campaign, "crab-1", path=["lion-akodo"])
    assert refused.value.code == "not_adjacent"
    assert not Order.objects.exists()


def test_r4_resolution_moves_armies_updates_control_and_records_the_case() -> None:
    campaign = campaign_with({"crab-1": "lion-ikoma", "lion-1": "lion-akodo"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(turn, campaign, "crab-1", path=["beiden-pass"])
    resolved = resolve(turn)
    assert resolved is not None and resolved.status == Turn.Status.RESOLVED
    campaign.refresh_from_db()
    assert campaign.board["armies"]["crab-1"] == {"province": "beiden-pass"}
    assert campaign.board["control"]["beiden-pass"] == "crab"
    replay = case_from_dict(resolved.case)
    assert (
        expect_differences(
            {k: resolved.result[k] for k in ("armies", "control", "scores")},
            result_to_dict(case_run(replay)),
        )
        == []
    )


def test_r11_a_random_swap_draw_is_stored_as_given_so_the_export_replays_it() -> None:
    campaign = campaign_with({"crab-1": "crab-hida", "lion-1": "crab-hiruma"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(turn, campaign, "crab-1", path=["crab-hiruma"])
    give(turn, campaign, "lion-1", path=["crab-hida"])
    resolved = resolve(turn, seed=4)
    assert resolved is not None
    (draw,) = resolved.result["draws"]
    assert draw["method"] == "random"
    assert resolved.case["draws"] == {"crab-hida|crab-hiruma": draw["moving_from"]}
    replay = result_to_dict(case_run(case_from_dict(resolved.case)))
    assert replay["armies"] == resolved.result["armies"]


def test_one_turn_is_resolved_exactly_once() -> None:
    campaign = campaign_with({"crab-1": "crab-hida"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(turn, campaign, "crab-1", path=["crab-hiruma"])
    assert resolve(turn) is not None
    assert resolve(turn) is None  # the second caller finds the turn no longer open
    campaign.refresh_from_db()
    assert campaign.board["armies"]["crab-1"]["province"] == "crab-hiruma"


@pytest.mark.parametrize("count", [8, 48, 480])
def test_resolution_query_count_does_not_grow_with_the_armies(count: int) -> None:
    provinces = list(rokugan_map().provinces)
    placements = {f"crab-{i}": provinces[i % len(provinces)] for i in range(count)}
    campaign = campaign_with(placements)
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    with CaptureQueriesContext(connection) as queries:
        resolve(turn)
    # The guard, the turn, the campaign (locked), its armies, the orders, the two writes,
    # and the savepoint and its release: the same for 8 armies as for 480. Called outside a
    # tournament's unit of work, as here, each of the two writes also gives the campaign a
    # new order frame (referees.kernel.core.frame_row_saved); within the clock's unit that is
    # part of the one version update.
    assert len(queries) == 9 + 2, [q["sql"][:80] for q in queries]


def test_undo_restores_the_board_and_reopens_the_turn_keeping_later_orders() -> None:
    campaign = campaign_with({"crab-1": "crab-hida"})
    first = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(first, campaign, "crab-1", path=["crab-hiruma"])
    resolve(first)
    second = turn_open(campaign=campaign, number=2, now=now(), deadline=None)
    give(second, campaign, "crab-1", path=["shinomen-mori"])
    campaign.refresh_from_db()
    first.refresh_from_db()
    with transaction.atomic():
        turn_undo(campaign=campaign, turn=first)
    campaign.refresh_from_db()
    first.refresh_from_db()
    second.refresh_from_db()
    assert campaign.board["armies"]["crab-1"]["province"] == "crab-hida"
    assert campaign.board["control"]["crab-hiruma"] == "crab"
    assert first.status == Turn.Status.OPEN and first.result is None
    assert second.status == Turn.Status.UNDONE
    assert Order.objects.filter(turn=second).count() == 1  # kept on record
    assert [o.path for o in turn_current_orders(first).values()] == [["crab-hiruma"]]
    # Resolving again opens a new turn 2 beside the undone one.
    resolve(first)
    turn_open(campaign=campaign, number=2, now=now(), deadline=None)
    assert Turn.objects.filter(campaign=campaign, number=2).count() == 2


def test_r9_destroyed_army_reforms_through_a_stored_order() -> None:
    campaign = campaign_with({"crab-1": None})
    turn_one = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    with pytest.raises(OrderRefused, match="too_early"):
        give(turn_one, campaign, "crab-1", kind="reform", reform="crab-hida")
    resolve(turn_one)
    turn_two = turn_open(campaign=campaign, number=3, now=now(), deadline=None)
    give(turn_two, campaign, "crab-1", kind="reform", reform="crab-hida")
    resolve(turn_two)
    campaign.refresh_from_db()
    assert campaign.board["armies"]["crab-1"] == {"province": "crab-hida"}
    state = campaign_turn_state(campaign, turn=4)
    assert [a.province for a in state.armies] == ["crab-hida"]
