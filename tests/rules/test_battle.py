"""Battle set-up from the map: Small Farms (R7) and clan abilities (R10)."""

from __future__ import annotations

import pytest

from sl5r.rules.battle import Participant, battle_modifiers
from sl5r.rules.mapgraph import rokugan_map


def setup_for(province: str, clans: list[str], **kwargs: object) -> dict[str, tuple[int, ...]]:
    game_map = rokugan_map()
    control = kwargs.pop("control", None) or game_map.initial_control()
    setup = battle_modifiers(
        game_map=game_map,
        province=province,
        participants=[Participant(army=f"{c}-{i}", clan=c) for i, c in enumerate(clans)],
        control=control,  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )
    return {
        p.clan: (p.force_modifier, p.honor_bonus, p.hand_size, p.small_farms)
        for p in setup.participants
    }


def test_r10_crab_gets_one_force_in_a_crab_province() -> None:
    assert setup_for("crab-hida", ["crab", "lion"]) == {"crab": (1, 0, 5, 0), "lion": (1, 0, 5, 0)}


def test_r10_lion_gets_one_force_in_an_enemy_castle_only() -> None:
    assert setup_for("crab-hiruma", ["crab", "lion"])["lion"][0] == 0  # no castle
    assert setup_for("lion-akodo", ["crab", "lion"])["lion"][0] == 0  # own castle
    assert setup_for("toshi-ranbo", ["crab", "lion"])["lion"][0] == 0  # nobody's castle


def test_r10_crane_gets_three_honor_in_a_crane_province() -> None:
    assert setup_for("crane-asahina", ["crane", "crab"]) == {
        "crane": (0, 3, 5, 0),
        "crab": (0, 0, 5, 0),
    }
    assert setup_for("toshi-ranbo", ["crane", "crab"])["crane"][1] == 0


def test_r10_dragon_hand_one_larger_and_phoenix_takes_two_from_opponents() -> None:
    assert setup_for("kitsune-mori", ["dragon", "crab"])["dragon"][2] == 6
    at_home = setup_for("phoenix-shiba", ["phoenix", "dragon", "crab"])
    assert at_home["phoenix"][2] == 5
    assert at_home["dragon"][2] == 4
    assert at_home["crab"][2] == 3


def test_r10_emperor_edition_base_hand_of_six() -> None:
    at_home = setup_for("phoenix-shiba", ["phoenix", "dragon", "crab"], base_hand=6)
    assert (at_home["phoenix"][2], at_home["dragon"][2], at_home["crab"][2]) == (6, 5, 4)
    with pytest.raises(ValueError, match="5 or 6"):
        setup_for("phoenix-shiba", ["phoenix", "crab"], base_hand=7)


def test_r10_shadowlands_take_one_force_from_everyone_else_in_their_province() -> None:
    result = setup_for("shadowlands-pit", ["shadowlands", "crab", "lion"])
    assert result["crab"][0] == -1 and result["lion"][0] == -1
    assert result["shadowlands"][0] == 0


def test_r10_ability_works_only_when_its_clan_fights() -> None:
    # A Phoenix province taken over by nobody else, fought over by Crab and Lion.
    result = setup_for("phoenix-shiba", ["crab", "lion"])
    assert result["crab"][2] == 5 and result["lion"][2] == 5
    assert result["lion"][0] == 1  # ... but Phoenix's castle is an enemy castle to the Lion


def test_r10_abilities_off_means_no_modifiers_but_small_farms_stay() -> None:
    game_map = rokugan_map()
    control = game_map.initial_control()
    control["toshi-ranbo"] = "crab"
    control["otosan-uchi"] = "crab"
    result = setup_for(
        "crab-hida", ["crab", "dragon", "phoenix"], control=control, clan_abilities=False
    )
    assert result == {
        "crab": (0, 0, 5, 2),
        "dragon": (0, 0, 5, 0),
        "phoenix": (0, 0, 5, 0),
    }


def test_r7_small_farms_per_participant_follow_castles_held() -> None:
    game_map = rokugan_map()
    control = game_map.initial_control()
    control["crab-hida"] = "lion"
    assert setup_for("crab-hida", ["crab", "lion"], control=control) == {
        "crab": (0, 0, 5, 0),
        "lion": (0, 0, 5, 1),
    }


def test_r10_scorpion_chooses_seating_with_three_or_more_armies() -> None:
    game_map = rokugan_map()
    args = {"game_map": game_map, "province": "kitsune-mori", "control": game_map.initial_control()}
    two = battle_modifiers(
        participants=[Participant("scorpion-1", "scorpion"), Participant("crab-1", "crab")], **args
    )
    assert two.seating_chosen_by == ()
    three = battle_modifiers(
        participants=[
            Participant("scorpion-1", "scorpion"),
            Participant("crab-1", "crab"),
            Participant("lion-1", "lion"),
        ],
        **args,
    )
    assert three.seating_chosen_by == ("scorpion-1",)
    off = battle_modifiers(
        participants=[
            Participant("scorpion-1", "scorpion"),
            Participant("crab-1", "crab"),
            Participant("lion-1", "lion"),
        ],
        clan_abilities=False,
        **args,
    )
    assert off.seating_chosen_by == ()
