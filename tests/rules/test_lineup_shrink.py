"""R1 (b) at the start: the line-up without the players who did not come (issue 32).

A clan that loses a member drops its Karo first, then its Daimyo, then a General; a Karo or
a Daimyo left without a role steps into the army of a General who did not come.
"""

from __future__ import annotations

from collections.abc import Sequence

from sl5r.rules.clans import CLANS
from sl5r.rules.roles import (
    Role,
    ShortfallRule,
    ThreeVariant,
    clan_roles,
    lineup_shape,
    lineup_shrink,
)

G, D, K = Role.GENERAL, Role.DAIMYO, Role.KARO


def members(
    size: int, variant: ThreeVariant = ThreeVariant.GENERALS_AND_DAIMYO
) -> dict[str, list[tuple[str, Role]]]:
    """Every clan full with ``size`` members, named ``<clan>-<role>-<n>``."""
    out: dict[str, list[tuple[str, Role]]] = {}
    for clan in CLANS:
        roles = clan_roles(size, variant)
        out[clan] = [(f"{clan}-{r.value}-{n}", r) for n, r in enumerate(roles, start=1)]
    return out


def after(plan_clan: Sequence[object]) -> list[tuple[str, Role, Role]]:
    return [(s.member, s.before, s.after) for s in plan_clan]  # type: ignore[attr-defined]


def test_a_missing_general_is_replaced_by_the_clans_karo_who_takes_his_army() -> None:
    plan = lineup_shrink(lineup_shape(39), members(5), ["crab-general-2"])

    assert plan.problems == ()
    assert plan.players == 39
    assert after(plan.clans["crab"]) == [
        ("crab-general-1", G, G),
        ("crab-general-3", G, G),
        ("crab-daimyo-4", D, D),
        ("crab-karo-5", K, G),
    ]
    assert plan.armies == {"crab-general-2": "crab-karo-5"}
    assert all(not s.changed for s in plan.clans["crane"])


def test_a_missing_karo_just_leaves() -> None:
    plan = lineup_shrink(lineup_shape(39), members(5), ["lion-karo-5"])

    assert plan.problems == ()
    assert [s.after for s in plan.clans["lion"]] == [G, G, G, D]
    assert plan.armies == {}


def test_a_missing_daimyo_is_replaced_by_the_karo() -> None:
    plan = lineup_shrink(lineup_shape(39), members(5), ["lion-daimyo-4"])

    assert [(s.before, s.after) for s in plan.clans["lion"]] == [(G, G), (G, G), (G, G), (K, D)]


def test_without_a_karo_the_daimyo_takes_the_army() -> None:
    """24 players, two Generals and a Daimyo: a General missing makes the Daimyo one."""
    plan = lineup_shrink(lineup_shape(23), members(3), ["phoenix-general-1"])

    assert [(s.member, s.after) for s in plan.clans["phoenix"]] == [
        ("phoenix-general-2", G),
        ("phoenix-daimyo-3", G),
    ]
    assert plan.armies == {"phoenix-general-1": "phoenix-daimyo-3"}


def test_with_generals_only_the_army_leaves_with_its_general() -> None:
    plan = lineup_shrink(lineup_shape(15), members(2), ["crane-general-2"])

    assert plan.problems == ()
    assert [s.after for s in plan.clans["crane"]] == [G]
    assert plan.armies == {}


def test_two_missing_in_one_clan_is_more_than_r1_b_allows() -> None:
    plan = lineup_shrink(lineup_shape(38), members(5), ["crab-karo-5", "crab-general-1"])

    assert [(p.code, p.clan, p.role, p.have, p.allowed) for p in plan.problems] == [
        ("missing", "crab", G, 2, 3)
    ]


def test_more_smaller_clans_than_the_count_allows_is_refused() -> None:
    """Two clans one member fewer, but the count was not lowered by two."""
    plan = lineup_shrink(lineup_shape(39), members(5), ["crab-karo-5", "crane-karo-5"])

    assert plan.problems


def test_several_clans_each_one_fewer() -> None:
    plan = lineup_shrink(
        lineup_shape(37, shortfall=ShortfallRule.SMALLER_CLANS),
        members(5),
        ["crab-general-1", "crane-daimyo-4", "dragon-karo-5"],
    )

    assert plan.problems == ()
    assert plan.players == 37
    assert plan.armies == {"crab-general-1": "crab-karo-5"}
