"""Scoring (R12) and Small Farms (R7) as functions of control."""

from __future__ import annotations

from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.scoring import clan_scores, score_breakdown, small_farms


def test_r12_start_position_scores_on_bundled_map() -> None:
    game_map = rokugan_map()
    scores = clan_scores(game_map, game_map.initial_control(), CLANS)
    expected = {clan: 10 for clan in CLANS}
    expected["crane"] = 13
    assert scores == expected


def test_r12_home_province_counts_two_other_one_castle_one_more() -> None:
    game_map = rokugan_map()
    control = game_map.initial_control()
    control["toshi-ranbo"] = "lion"  # unaligned castle: 1 + 1
    control["crab-hiruma"] = "lion"  # Crab home, no castle: 1 for the Lion, -2 for the Crab
    control["crab-hida"] = "lion"  # Crab home castle: 2 for the Lion, -3 for the Crab
    breakdown = score_breakdown(game_map, control, CLANS)
    assert breakdown["lion"].home_provinces == 4
    assert breakdown["lion"].other_provinces == 3
    assert breakdown["lion"].castles == 4
    assert breakdown["lion"].total == 8 + 3 + 4
    assert breakdown["crab"].total == 10 - 2 - 3


def test_r12_uncontrolled_provinces_score_for_nobody_and_excluded_clans_are_not_listed() -> None:
    game_map = rokugan_map()
    control = game_map.initial_control({"shadowlands"})
    scores = clan_scores(game_map, control, [c for c in CLANS if c != "shadowlands"])
    assert "shadowlands" not in scores
    assert sum(scores.values()) == 7 * 10 + 3


def test_r7_small_farms_count_castles_beyond_the_starting_count_never_below_zero() -> None:
    game_map = rokugan_map()
    control = game_map.initial_control()
    control["otosan-uchi"] = "crab"
    control["toshi-ranbo"] = "crab"
    control["crane-doji"] = "crab"  # the Crane drops to 2 castles: no farm, not -1
    control["lion-akodo"] = "crane"  # ... and back to 3: still none
    farms = small_farms(game_map, control, CLANS)
    assert farms["crab"] == 3
    assert farms["crane"] == 0
    assert farms["lion"] == 0
    control["lion-matsu"] = "crane"  # 4 castles for the Crane: one farm
    assert small_farms(game_map, control, CLANS)["crane"] == 1
