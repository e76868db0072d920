"""Roles per player count, what each role sees, and starting positions (R1, R1.1, R3)."""

from __future__ import annotations

import pytest

from sl5r.rules.errors import LineupError
from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.roles import (
    Role,
    ShortfallRule,
    ThreeVariant,
    general_visible_provinces,
    lineup_check,
    lineup_propose,
    public_display_shows_armies,
    role_visibility,
    starting_positions_check,
)

G, D, K = Role.GENERAL, Role.DAIMYO, Role.KARO


@pytest.mark.parametrize(
    ("players", "variant", "roles"),
    [
        (8, ThreeVariant.GENERALS_AND_DAIMYO, [G]),
        (16, ThreeVariant.GENERALS_AND_DAIMYO, [G, G]),
        (24, ThreeVariant.GENERALS_AND_DAIMYO, [G, G, D]),
        (24, ThreeVariant.THREE_GENERALS, [G, G, G]),
        (32, ThreeVariant.GENERALS_AND_DAIMYO, [G, G, G, D]),
        (40, ThreeVariant.GENERALS_AND_DAIMYO, [G, G, G, D, K]),
        (48, ThreeVariant.GENERALS_AND_DAIMYO, [G, G, G, G, D, K]),
    ],
)
def test_r1_table_of_roles_per_clan_for_multiples_of_eight(
    players: int, variant: ThreeVariant, roles: list[Role]
) -> None:
    lineup = lineup_propose(players, variant=variant)
    assert len(lineup.clans) == 8
    assert all(list(r) == roles for r in lineup.clans.values())
    assert lineup.players == players
    assert not lineup.excluded_clans


def test_r1_smaller_clans_drop_the_karo_first_then_the_daimyo() -> None:
    lineup = lineup_propose(46)  # 48 less 2: two clans lose their Karo
    sizes = sorted(len(r) for r in lineup.clans.values())
    assert sizes == [5, 5, 6, 6, 6, 6, 6, 6]
    assert all(K not in r for r in lineup.clans.values() if len(r) == 5)
    lineup = lineup_propose(36)  # 40 less 4: four clans of 3 Generals + Daimyo
    short = [r for r in lineup.clans.values() if len(r) == 4]
    assert len(short) == 4 and all(list(r) == [G, G, G, D] for r in short)
    lineup = lineup_propose(28)  # 32 less 4: four clans drop the Daimyo
    assert sorted(tuple(r) for r in lineup.clans.values() if len(r) == 3) == [(G, G, G)] * 4


def test_r1_smaller_clans_below_two_lose_a_general_last() -> None:
    lineup = lineup_propose(12)
    assert sorted(len(r) for r in lineup.clans.values()) == [1, 1, 1, 1, 2, 2, 2, 2]
    assert lineup.players == 12


def test_r1_judge_chooses_which_clans_are_smaller() -> None:
    lineup = lineup_propose(15, smaller_clans=["crab"])
    assert list(lineup.clans["crab"]) == [G]
    assert all(len(r) == 2 for c, r in lineup.clans.items() if c != "crab")
    with pytest.raises(LineupError, match="exactly 1 smaller clans"):
        lineup_propose(15, smaller_clans=["crab", "lion"])
    with pytest.raises(LineupError, match='"orc" is not a clan'):
        lineup_propose(15, smaller_clans=["orc"])


def test_r1_shadowlands_left_out_seven_clans_share_the_players() -> None:
    lineup = lineup_propose(21, shortfall=ShortfallRule.EXCLUDE_SHADOWLANDS)
    assert lineup.excluded_clans == {"shadowlands"}
    assert "shadowlands" not in lineup.clans
    assert all(len(r) == 3 for r in lineup.clans.values())


def test_r1_multiple_of_eight_never_excludes_shadowlands() -> None:
    lineup = lineup_propose(16, shortfall=ShortfallRule.EXCLUDE_SHADOWLANDS)
    assert not lineup.excluded_clans


@pytest.mark.parametrize(("players", "message"), [(7, "too few"), (49, "too many"), (0, "too few")])
def test_r1_impossible_player_counts_are_refused(players: int, message: str) -> None:
    with pytest.raises(LineupError, match=message):
        lineup_propose(players)


@pytest.mark.parametrize(
    ("roles", "problem"),
    [
        ([D], "at least one General"),
        ([G] * 5, "at most four Generals"),
        ([G, D, D], "one Daimyo"),
        ([G, K], "no Daimyo"),
        ([G, G, D, K], None),
    ],
)
def test_r1_clan_lineup_check(roles: list[Role], problem: str | None) -> None:
    found = lineup_check(roles)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_r1_1_general_without_daimyo_sees_everything_and_negotiates() -> None:
    v = role_visibility(G, [G, G])
    assert v.sees_all_armies and v.negotiates and v.gives_orders


def test_r1_1_general_under_a_daimyo_sees_only_his_surroundings() -> None:
    v = role_visibility(G, [G, G, D])
    assert not v.sees_all_armies and not v.negotiates
    game_map = rokugan_map()
    seen = general_visible_provinces(game_map, "crab-hida")
    assert "crab-hida" in seen and seen - {"crab-hida"} == game_map.neighbours["crab-hida"]
    assert general_visible_provinces(game_map, None) == frozenset()


def test_r1_1_daimyo_with_a_karo_gives_no_written_instructions_and_watches_no_battles() -> None:
    alone = role_visibility(D, [G, G, G, D])
    assert alone.gives_written_instructions and alone.watches_battles
    with_karo = role_visibility(D, [G, G, G, D, K])
    assert with_karo.sees_all_armies and with_karo.negotiates
    assert not with_karo.gives_written_instructions and not with_karo.watches_battles
    karo = role_visibility(K, [G, G, G, D, K])
    assert karo.sees_all_armies and karo.watches_battles and not karo.negotiates
    assert not karo.gives_orders


def test_r1_1_public_display_shows_armies_only_when_no_clan_has_a_daimyo() -> None:
    assert public_display_shows_armies(lineup_propose(16).clans)
    assert not public_display_shows_armies(lineup_propose(24).clans)
    assert public_display_shows_armies(
        lineup_propose(24, variant=ThreeVariant.THREE_GENERALS).clans
    )


def test_r3_armies_start_in_castles_first() -> None:
    m = rokugan_map()
    assert starting_positions_check(m, "crab", ["crab-hida", "crab-kaiu"]) == []
    assert starting_positions_check(m, "crab", ["crab-hida", "crab-kaiu", "crab-yasuki"]) == []
    problems = starting_positions_check(m, "crab", ["crab-hida", "crab-yasuki"])
    assert len(problems) == 1 and "Kaiu Lands must be used" in problems[0]


def test_r3_24_player_three_generals_third_army_without_castle() -> None:
    m = rokugan_map()
    assert starting_positions_check(m, "lion", ["lion-akodo", "lion-matsu", "lion-kitsu"]) == []


def test_r3_crane_five_home_provinces_three_castles() -> None:
    m = rokugan_map()
    castles = ["crane-doji", "crane-kakita", "crane-daidoji"]
    assert starting_positions_check(m, "crane", [*castles, "crane-asahina"]) == []
    assert starting_positions_check(m, "crane", ["crane-doji", "crane-kakita", "crane-asahina"])


@pytest.mark.parametrize(
    ("provinces", "problem"),
    [
        (["crab-hida", "crab-hida"], "same province"),
        (["lion-akodo"], "not a crab home province"),
        (["nowhere"], 'no province "nowhere"'),
        (["crab-hida", "crab-kaiu", "crab-yasuki", "crab-hiruma", "crab-hida"], "only 4 home"),
    ],
)
def test_r3_bad_starting_positions_are_named(provinces: list[str], problem: str) -> None:
    problems = starting_positions_check(rokugan_map(), "crab", provinces)
    assert any(problem in p for p in problems), problems
