"""The typed board: what it reads from ``Campaign.board`` and how it writes it back."""

from __future__ import annotations

from typing import Any

import pytest

from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.turn import Army as RulesArmy
from strategic_map.board import Board, Spot
from strategic_map.models import Campaign
from strategic_map.selectors import ArmyIdentity
from strategic_map.services import campaign_create, map_import


def board_of(raw: dict[str, Any]) -> Board:
    return Board.of(Campaign(board=raw))


def sample() -> dict[str, Any]:
    return {
        "armies": {
            "crab-1": {"province": "crab-hida"},
            "lion-1": {"province": "crab-hida", "in_battle": True},
            "lion-2": {"province": None, "destroyed_in_turn": 3, "destroyed_by": "winner"},
        },
        "control": {"crab-hida": "crab", "lion-akodo": None},
    }


def test_spot_reads_every_stored_field() -> None:
    board = board_of(sample())
    assert board.spot("crab-1") == Spot(province="crab-hida")
    assert board.spot("lion-1") == Spot(province="crab-hida", in_battle=True)
    destroyed = board.spot("lion-2")
    assert destroyed == Spot(province=None, destroyed_in_turn=3, destroyed_by="winner")
    assert destroyed is not None and destroyed.destroyed


def test_an_army_not_yet_placed_has_no_spot_and_no_province() -> None:
    board = board_of(sample())
    assert board.spot("unicorn-1") is None
    assert board.province_of("unicorn-1") is None
    assert not board.is_placed("unicorn-1")


def test_a_destroyed_army_is_placed_but_stands_nowhere() -> None:
    board = board_of(sample())
    assert board.is_placed("lion-2")
    assert board.province_of("lion-2") is None


def test_spots_lists_every_placed_army_in_stored_order() -> None:
    assert list(board_of(sample()).spots()) == ["crab-1", "lion-1", "lion-2"]


def test_standing_in_gives_the_live_armies_of_a_province_sorted() -> None:
    board = board_of(sample())
    assert board.standing_in("crab-hida") == ["crab-1", "lion-1"]
    assert board.standing_in("lion-akodo") == []


def test_control_reads_a_province_and_copies_the_mapping() -> None:
    board = board_of(sample())
    assert board.control_of("crab-hida") == "crab"
    assert board.control_of("lion-akodo") is None
    assert board.control_of("nowhere") is None
    control = board.control()
    control["crab-hida"] = "lion"
    assert board.control_of("crab-hida") == "crab"


def test_an_empty_board_reads_as_no_armies_and_no_control() -> None:
    board = board_of({})
    assert board.spots() == {}
    assert board.control() == {}
    assert board.standing_in("crab-hida") == []


def test_rules_armies_keeps_the_given_order_and_skips_armies_not_placed() -> None:
    board = board_of(sample())
    armies = [
        ArmyIdentity(code="lion-2", clan="lion"),
        ArmyIdentity(code="unicorn-1", clan="unicorn"),
        ArmyIdentity(code="lion-1", clan="lion"),
    ]
    assert board.rules_armies(armies) == [
        RulesArmy(
            id="lion-2", clan="lion", province=None, destroyed_in_turn=3, destroyed_by="winner"
        ),
        RulesArmy(id="lion-1", clan="lion", province="crab-hida", in_battle=True),
    ]


def test_place_and_destroy_write_the_stored_format() -> None:
    raw: dict[str, Any] = {}
    board = board_of(raw)
    board.place("crab-1", province="crab-hida")
    board.place("crab-2", province="crab-kaiu", in_battle=True)
    board.destroy("lion-1", turn=2, by="loss")
    assert board.campaign.board["armies"] == {
        "crab-1": {"province": "crab-hida"},
        "crab-2": {"province": "crab-kaiu", "in_battle": True},
        "lion-1": {"province": None, "destroyed_in_turn": 2, "destroyed_by": "loss"},
    }


def test_set_in_battle_marks_and_clears_a_standing_army_only() -> None:
    board = board_of(sample())
    board.set_in_battle("crab-1", True)
    board.set_in_battle("lion-1", False)
    board.set_in_battle("lion-2", True)  # destroyed: nothing to mark
    board.set_in_battle("unicorn-1", True)  # not placed: nothing to mark
    assert board.campaign.board["armies"]["crab-1"] == {"province": "crab-hida", "in_battle": True}
    assert board.campaign.board["armies"]["lion-1"] == {"province": "crab-hida"}
    assert "in_battle" not in board.campaign.board["armies"]["lion-2"]
    assert not board.is_placed("unicorn-1")


def test_set_control_and_replace_control() -> None:
    board = board_of({})
    board.set_control("crab-hida", "lion")
    assert board.control() == {"crab-hida": "lion"}
    board.replace_control({"crab-kaiu": "crab"})
    assert board.control() == {"crab-kaiu": "crab"}


def test_replace_updates_the_engines_armies_keeps_the_others_and_replaces_control() -> None:
    raw = sample()
    board = board_of(raw)
    snapshot = board.to_json()
    board.replace(
        armies=[
            RulesArmy(id="crab-1", clan="crab", province=None, destroyed_in_turn=4),
            RulesArmy(id="lion-1", clan="lion", province="lion-akodo"),
        ],
        control={"lion-akodo": "lion"},
    )
    assert board.spots() == {
        "crab-1": Spot(province=None, destroyed_in_turn=4),
        "lion-1": Spot(province="lion-akodo"),
        "lion-2": Spot(province=None, destroyed_in_turn=3, destroyed_by="winner"),
    }
    assert board.control() == {"lion-akodo": "lion"}
    assert snapshot == sample()  # the snapshot taken before is untouched


def test_to_json_is_a_deep_copy() -> None:
    board = board_of(sample())
    copied = board.to_json()
    copied["armies"]["crab-1"]["province"] = "elsewhere"
    assert board.province_of("crab-1") == "crab-hida"


def test_two_views_of_one_campaign_see_each_others_writes() -> None:
    campaign = Campaign(board=sample())
    Board.of(campaign).place("unicorn-1", province="lion-akodo")
    assert Board.of(campaign).province_of("unicorn-1") == "lion-akodo"


def test_spot_round_trips_through_json_and_the_engine() -> None:
    for raw in sample()["armies"].values():
        spot = Spot.from_json(raw)
        assert spot.to_json() == raw
        army = ArmyIdentity(code="x-1", clan="x")
        assert Spot.of_rules(spot.to_rules(army)) == spot


@pytest.mark.django_db
def test_save_stores_the_board_and_the_fields_named() -> None:
    game_map = map_import(slug="rokugan", data=rokugan_map().to_dict())
    campaign = campaign_create(game_map=game_map)
    board = Board.of(campaign)
    board.place("crab-1", province="crab-hida")
    board.set_control("crab-hida", "lion")
    campaign.version = 7
    board.save(also=("version",))
    stored = Campaign.objects.get(pk=campaign.pk)
    assert Board.of(stored).spot("crab-1") == Spot(province="crab-hida")
    assert Board.of(stored).control_of("crab-hida") == "lion"
    assert stored.version == 7
