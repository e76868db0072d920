"""The tables' side of the board: who stands where, ``in_battle``, a result's casualties
and control (R4, R6, R8, R9), on a bare campaign of the bundled map."""

from __future__ import annotations

import pytest
from django.utils import timezone

from battles.board import (
    board_battle_enter,
    board_battle_result,
    board_casualties_restore,
    campaign_armies,
    campaign_turn_number,
    province_armies,
    province_controller,
)
from referees.kernel.core import TournamentError
from sl5r.rules.games import TableOutcome
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.board import Board, Spot
from strategic_map.models import Campaign, Turn
from strategic_map.services import army_create, board_place, campaign_create, map_import

pytestmark = pytest.mark.django_db

PROVINCE = "lion-akodo"


def campaign_with(placements: dict[str, str | None]) -> Campaign:
    game_map = map_import(slug="rokugan", data=rokugan_map().to_dict())
    campaign = campaign_create(game_map=game_map)
    for code, province in placements.items():
        army = army_create(campaign=campaign, code=code, clan=code.split("-")[0])
        board_place(campaign=campaign, army=army, province=province, destroyed_in_turn=1)
    campaign.save()
    return campaign


def stored(campaign: Campaign) -> Board:
    return Board.of(Campaign.objects.get(pk=campaign.pk))


def test_province_armies_are_the_live_ones_there_in_code_order() -> None:
    campaign = campaign_with(
        {"unicorn-2": PROVINCE, "lion-1": PROVINCE, "lion-2": None, "crab-1": "crab-hida"}
    )
    assert list(province_armies(campaign, PROVINCE)) == ["lion-1", "unicorn-2"]


def test_campaign_armies_gives_the_rows_of_the_codes_that_exist() -> None:
    campaign = campaign_with({"lion-1": PROVINCE, "unicorn-2": PROVINCE})
    assert list(campaign_armies(campaign, ["lion-1", "nobody-9"])) == ["lion-1"]
    assert set(campaign_armies(campaign)) == {"lion-1", "unicorn-2"}


def test_turn_number_is_the_open_turn_or_the_next_after_the_last_played() -> None:
    campaign = campaign_with({})
    assert campaign_turn_number(campaign) == 1
    Turn.objects.create(
        campaign=campaign, number=3, status=Turn.Status.RESOLVED, opened_at=timezone.now()
    )
    assert campaign_turn_number(campaign) == 4
    Turn.objects.create(
        campaign=campaign, number=4, status=Turn.Status.OPEN, opened_at=timezone.now()
    )
    assert campaign_turn_number(campaign) == 4


def test_r4_entering_a_battle_marks_the_armies_and_saves_the_board() -> None:
    campaign = campaign_with({"lion-1": PROVINCE, "unicorn-2": PROVINCE})
    board_battle_enter(campaign=campaign, codes=["lion-1", "unicorn-2"])
    board = stored(campaign)
    assert board.spot("lion-1") == Spot(province=PROVINCE, in_battle=True)
    assert board.spot("unicorn-2") == Spot(province=PROVINCE, in_battle=True)


def test_r6_r8_a_win_destroys_the_loser_frees_the_winner_and_his_clan_takes_control() -> None:
    campaign = campaign_with({"lion-1": PROVINCE, "unicorn-2": PROVINCE})
    board_battle_enter(campaign=campaign, codes=["lion-1", "unicorn-2"])
    casualties = board_battle_result(
        campaign=campaign,
        province=PROVINCE,
        outcome=TableOutcome(kind="win", winner="unicorn-2", losers=("lion-1",), reason=""),
        armies=campaign_armies(campaign),
        survivors={"unicorn-2"},
        turn=2,
    )
    assert [c.army for c in casualties] == ["lion-1"]
    board = stored(campaign)
    assert board.spot("lion-1") == Spot(province=None, destroyed_in_turn=2, destroyed_by="loss")
    assert board.spot("unicorn-2") == Spot(province=PROVINCE)
    assert province_controller(campaign, PROVINCE) == "unicorn"
    assert board.control_of(PROVINCE) == "unicorn"


def test_r6_a_truce_leaves_control_as_it_was() -> None:
    campaign = campaign_with({"lion-1": PROVINCE, "unicorn-2": PROVINCE})
    board_battle_result(
        campaign=campaign,
        province=PROVINCE,
        outcome=TableOutcome(kind="truce", winner=None, losers=(), reason=""),
        armies=campaign_armies(campaign),
        survivors={"lion-1", "unicorn-2"},
        turn=2,
    )
    assert stored(campaign).control_of(PROVINCE) == "lion"


def test_a_result_that_does_not_fit_its_survivors_is_refused() -> None:
    campaign = campaign_with({"lion-1": PROVINCE, "unicorn-2": PROVINCE})
    with pytest.raises(TournamentError) as refused:
        board_battle_result(
            campaign=campaign,
            province=PROVINCE,
            outcome=TableOutcome(kind="win", winner="unicorn-2", losers=("lion-1",), reason=""),
            armies=campaign_armies(campaign),
            survivors={"lion-1"},
            turn=2,
        )
    assert refused.value.code == "validation"


def test_r9_restoring_casualties_brings_back_only_those_off_the_board_since_the_battle() -> None:
    campaign = campaign_with({"lion-1": None, "lion-2": None, "unicorn-2": PROVINCE})
    Board.of(campaign).destroy("lion-1", turn=2, by="loss")
    Board.of(campaign).destroy("lion-2", turn=1, by="loss")  # an earlier loss: not this battle
    restored, kept_off = board_casualties_restore(
        campaign=campaign,
        province=PROVINCE,
        armies=campaign_armies(campaign),
        casualties=[{"army": "lion-1"}, {"army": "lion-2"}, {"army": "unicorn-2"}],
        turn=2,
    )
    assert (restored, kept_off) == (["lion-1"], ["lion-2", "unicorn-2"])
    board = stored(campaign)
    assert board.spot("lion-1") == Spot(province=PROVINCE)
    assert board.spot("lion-2") == Spot(province=None, destroyed_in_turn=1, destroyed_by="loss")
