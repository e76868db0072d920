"""R1 on registration: ``lineup_shape``, ``lineup_admits`` and ``lineup_fill``.

The registration paths and the start (referees) refuse exactly what these refuse, so the
whole matrix of counts, the 24-player choice and both shortfall rules is checked here.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sl5r.rules.clans import CLANS, SHADOWLANDS
from sl5r.rules.errors import LineupError
from sl5r.rules.roles import (
    LineupShape,
    Role,
    ShortfallRule,
    ThreeVariant,
    lineup_admits,
    lineup_fill,
    lineup_propose,
    lineup_shape,
)

G, D, K = Role.GENERAL, Role.DAIMYO, Role.KARO


def seatable(players: int, shortfall: ShortfallRule) -> bool:
    try:
        lineup_propose(players, shortfall=shortfall)
    except LineupError:
        return False  # e.g. 43 players without the Shadowlands: more than 6 a clan
    return True


SETTINGS = [
    (players, shortfall, variant)
    for players in range(8, 49)
    for shortfall in ShortfallRule
    for variant in ThreeVariant
    if seatable(players, shortfall)
]


def proposed(
    players: int, shortfall: ShortfallRule, variant: ThreeVariant
) -> dict[str, list[Role]]:
    lineup = lineup_propose(players, shortfall=shortfall, variant=variant)
    return {clan: list(roles) for clan, roles in lineup.clans.items()}


@pytest.mark.parametrize(("players", "shortfall", "variant"), SETTINGS)
def test_r1_the_proposed_lineup_of_every_count_is_complete(
    players: int, shortfall: ShortfallRule, variant: ThreeVariant
) -> None:
    shape = lineup_shape(players, shortfall=shortfall, variant=variant)
    assert lineup_admits(shape, proposed(players, shortfall, variant), complete=True) == []


@pytest.mark.parametrize(("players", "shortfall", "variant"), SETTINGS)
def test_r1_one_player_short_is_allowed_while_registering_but_not_at_the_start(
    players: int, shortfall: ShortfallRule, variant: ThreeVariant
) -> None:
    shape = lineup_shape(players, shortfall=shortfall, variant=variant)
    lineup = proposed(players, shortfall, variant)
    lineup["crab"].pop()
    assert lineup_admits(shape, lineup) == []
    problems = lineup_admits(shape, lineup, complete=True)
    assert problems and all(p.code == "missing" for p in problems)


@pytest.mark.parametrize(("players", "shortfall", "variant"), SETTINGS)
def test_r1_no_role_can_be_added_to_a_complete_lineup(
    players: int, shortfall: ShortfallRule, variant: ThreeVariant
) -> None:
    shape = lineup_shape(players, shortfall=shortfall, variant=variant)
    for clan in shape.clans:
        for role in Role:
            lineup = proposed(players, shortfall, variant)
            lineup[clan].append(role)
            assert lineup_admits(shape, lineup), (clan, role)


def test_r1_a_daimyo_in_a_16_player_game_is_refused_with_the_count() -> None:
    problems = lineup_admits(lineup_shape(16), {"crab": [G, G, D]})
    assert [(p.code, p.clan, p.role, p.have, p.allowed) for p in problems] == [
        ("too_many", "crab", D, 1, 0)
    ]


def test_r1_a_fourth_general_in_a_24_player_game_is_refused_in_both_variants() -> None:
    for variant, allowed in (
        (ThreeVariant.THREE_GENERALS, 3),
        (ThreeVariant.GENERALS_AND_DAIMYO, 2),
    ):
        shape = lineup_shape(24, variant=variant)
        problems = lineup_admits(shape, {"crab": [G] * (allowed + 1)})
        assert [(p.code, p.have, p.allowed) for p in problems] == [
            ("too_many", allowed + 1, allowed)
        ]


def test_r1_24_three_generals_variant_has_no_daimyo() -> None:
    shape = lineup_shape(24, variant=ThreeVariant.THREE_GENERALS)
    assert shape.full == (G, G, G) and shape.allowed(D) == 0


def test_r1b_any_clans_may_be_the_smaller_ones_but_only_as_many_as_the_count_needs() -> None:
    shape = lineup_shape(20)  # 4 clans of 2 Generals + Daimyo, 4 clans of 2 Generals
    assert (shape.full, shape.smaller, shape.smaller_clans) == ((G, G, D), (G, G), 4)
    chosen = ["crab", "crane", "lion", "unicorn"]
    lineup = {clan: [G, G, D] if clan in chosen else [G, G] for clan in CLANS}
    assert lineup_admits(shape, lineup, complete=True) == []
    lineup["dragon"].append(D)
    problems = lineup_admits(shape, lineup)
    assert [(p.code, p.have, p.allowed) for p in problems] == [("full_clans", 5, 4)]
    assert set(problems[0].clans) == {*chosen, "dragon"}


def test_r1b_drops_the_karo_first_then_the_daimyo() -> None:
    assert lineup_shape(36).smaller == (G, G, G, D)  # 40 less four Karo
    assert lineup_shape(28).smaller == (G, G, G)  # 32 less four Daimyo


def test_r1a_leaves_the_shadowlands_out() -> None:
    shape = lineup_shape(21, shortfall=ShortfallRule.EXCLUDE_SHADOWLANDS)
    assert SHADOWLANDS not in shape.clans and shape.smaller_clans == 0
    problems = lineup_admits(shape, {SHADOWLANDS: [G]})
    assert [(p.code, p.clan) for p in problems] == [("not_in_game", SHADOWLANDS)]


def test_r1_start_names_what_each_clan_lacks() -> None:
    shape = lineup_shape(32)
    registered = {clan: [G, G, G, D] for clan in CLANS}
    registered["crab"] = [G, G]
    problems = lineup_admits(shape, registered, complete=True)
    assert [(p.code, p.clan, p.role, p.have, p.allowed) for p in problems] == [
        ("missing", "crab", G, 2, 3),
        ("missing", "crab", D, 0, 1),
    ]


def test_r1_a_count_r1_cannot_seat_has_no_shape() -> None:
    for players in (7, 49):
        with pytest.raises(LineupError):
            lineup_shape(players)
    with pytest.raises(LineupError):
        lineup_shape(43, shortfall=ShortfallRule.EXCLUDE_SHADOWLANDS)


def fill_all(shape: LineupShape) -> Counter[tuple[str | None, Role | None]]:
    seats = lineup_fill(shape, {}, [(None, None)] * shape.players)
    assert all(not seat.problems for seat in seats)
    return Counter((seat.clan, seat.role) for seat in seats)


@pytest.mark.parametrize(("players", "shortfall", "variant"), SETTINGS)
def test_r1_fill_proposes_a_complete_lineup_for_names_alone(
    players: int, shortfall: ShortfallRule, variant: ThreeVariant
) -> None:
    shape = lineup_shape(players, shortfall=shortfall, variant=variant)
    filled = fill_all(shape)
    lineup: dict[str, list[Role]] = {}
    for (clan, role), count in filled.items():
        assert clan is not None and role is not None
        lineup.setdefault(clan, []).extend([role] * count)
    assert lineup_admits(shape, lineup, complete=True) == []
    more = lineup_fill(shape, lineup, [(None, None)])
    assert more[0].problems and more[0].clan is None


def test_r1_fill_keeps_what_is_given_and_marks_what_it_proposes() -> None:
    shape = lineup_shape(32)
    seats = lineup_fill(shape, {}, [("crab", D), ("crab", None), (None, G), ("crab", D)])
    assert [(s.clan, s.role, s.proposed_clan, s.proposed_role) for s in seats[:3]] == [
        ("crab", D, False, False),
        ("crab", G, False, True),
        ("crane", G, True, False),
    ]
    assert [(p.code, p.role) for p in seats[3].problems] == [("too_many", D)]
    assert seats[3].clan == "crab" and seats[3].role is D


def test_r1_fill_refuses_a_clan_not_in_the_game_and_goes_on() -> None:
    shape = lineup_shape(21, shortfall=ShortfallRule.EXCLUDE_SHADOWLANDS)
    seats = lineup_fill(shape, {}, [(SHADOWLANDS, G), ("crab", G)])
    assert [p.code for p in seats[0].problems] == ["not_in_game"]
    assert not seats[1].problems


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SETTINGS),
    st.lists(
        st.tuples(st.sampled_from([None, *CLANS]), st.sampled_from([None, *Role])), max_size=60
    ),
)
def test_r1_fill_never_seats_a_lineup_r1_refuses(
    setting: tuple[int, ShortfallRule, ThreeVariant],
    wanted: list[tuple[str | None, Role | None]],
) -> None:
    players, shortfall, variant = setting
    shape = lineup_shape(players, shortfall=shortfall, variant=variant)
    seated: dict[str, list[Role]] = {}
    for seat in lineup_fill(shape, {}, wanted):
        if not seat.problems:
            assert seat.clan is not None and seat.role is not None
            seated.setdefault(seat.clan, []).append(seat.role)
    assert lineup_admits(shape, seated) == []
    assert sum(len(r) for r in seated.values()) <= players


def test_r1_fill_says_why_a_role_without_a_clan_has_no_place() -> None:
    sixteen = lineup_fill(lineup_shape(16), {"crab": [G]}, [(None, D)])
    assert [(p.code, p.role, p.allowed) for p in sixteen[0].problems] == [("too_many", D, 0)]
    twenty = {clan: [G, G, D] for clan in ("crab", "crane", "dragon", "lion")}
    full = lineup_fill(lineup_shape(20), twenty, [(None, D)])
    assert [p.code for p in full[0].problems] == ["full_clans"]
    done = lineup_fill(lineup_shape(8), {clan: [G] for clan in CLANS}, [(None, None)])
    assert [(p.code, p.have) for p in done[0].problems] == [("players", 8)]


def test_r1_fill_places_what_lines_say_before_what_it_proposes() -> None:
    """Issue 30: a line left to R1 above a line asking for the Crab's only General took
    that place, and the line that asked for it was refused."""
    shape = lineup_shape(8)  # one General a clan

    seats = lineup_fill(shape, {}, [(None, None), ("crab", G), (None, G), ("crab", None)])

    assert [(s.clan, s.role, s.problems) for s in seats[:3]] == [
        ("crane", G, ()),  # proposed once the lines that name a clan are placed
        ("crab", G, ()),
        ("dragon", G, ()),
    ]
    assert seats[3].clan == "crab" and seats[3].problems  # the Crab is full: said, not moved
