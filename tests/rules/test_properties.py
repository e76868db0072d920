"""Properties of one adjudicated turn (R4–R9, R11, R12) over random maps, armies and orders.

Each test states one behaviour that must hold for every input: random connected maps of
3–30 provinces, random armies (some in a battle, some destroyed) and random orders, legal
and illegal (see ``strategies.py``). The expected values are computed here from rules.md and
docs/adjudication.md, not with the engine's helpers. A failing example prints as a case file.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from collections.abc import Sequence

from hypothesis import HealthCheck, example, given, settings

from sl5r.rules import (
    Army,
    DrawMethod,
    Order,
    Outcome,
    TurnResult,
    case_from_json,
    case_run,
    draw_key,
    result_to_dict,
)
from sl5r.rules.casefile import result_to_json
from sl5r.rules.clans import SCORPION, UNICORN
from tests.rules.strategies import Scenario, scenario_from, scenarios

# 120 examples per property keep the file near 12 s on 2 cores; raise it for a deeper
# search, e.g. SL5R_PROPERTY_EXAMPLES=2000.
MAX_EXAMPLES = int(os.environ.get("SL5R_PROPERTY_EXAMPLES", "120"))

properties = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- reading a scenario and its result ---------------------------------------------------


def _start(s: Scenario) -> dict[str, Army]:
    return {a.id: a for a in s.state.armies}


def _after(result: TurnResult) -> dict[str, Army]:
    return {a.id: a for a in result.armies}


def _blocked(s: Scenario) -> set[str]:
    """Impassable provinces and the excluded clans' home provinces, from the map dict (R1, R2)."""
    excluded = s.state.settings.excluded_clans
    return {
        p["id"]
        for p in s.map_data["provinces"]
        if p.get("impassable") or p.get("home_clan") in excluded
    }


def _battles(s: Scenario) -> set[str]:
    """Provinces with a battle going on at the start: an army there is in battle (R8)."""
    return {a.province for a in s.state.armies if a.in_battle and a.province is not None}


def _occupied(s: Scenario) -> set[str]:
    return {a.province for a in s.state.armies if a.province is not None}


def _neighbours(s: Scenario) -> dict[str, set[str]]:
    near: dict[str, set[str]] = defaultdict(set)
    for a, b in s.map_data["borders"]:
        near[a].add(b)
        near[b].add(a)
    return near


def _clans_by_province(armies: Sequence[Army]) -> dict[str, set[str]]:
    clans: dict[str, set[str]] = defaultdict(set)
    for a in armies:
        if a.province is not None:
            clans[a.province].add(a.clan)
    return clans


def _carried_out(s: Scenario, result: TurnResult) -> dict[str, Order]:
    """The orders that were not rejected, by army."""
    rejected = {o.army for o in result.orders if o.outcome is Outcome.REJECTED}
    return {o.army: o for o in s.orders if o.army not in rejected}


def _claims(s: Scenario, result: TurnResult) -> dict[str, bool]:
    """R6: an army claims unless its carried-out order says ``claim: false``."""
    carried = _carried_out(s, result)
    return {a.id: carried[a.id].claim if a.id in carried else True for a in s.state.armies}


# --- no army lost or duplicated (R4) ------------------------------------------------------


@properties
@given(scenarios())
def test_every_army_comes_back_once_in_input_order_with_its_id_and_clan(s: Scenario) -> None:
    """R4: the result lists exactly the input armies, same ids and clans, same order."""
    # when
    result = s.run()
    # then
    assert [(a.id, a.clan) for a in result.armies] == [(a.id, a.clan) for a in s.state.armies]


@properties
@given(scenarios())
def test_every_order_gets_exactly_one_result_in_input_order(s: Scenario) -> None:
    """R4: one order result per order, in the order the orders were given."""
    # when
    result = s.run()
    # then
    assert [o.army for o in result.orders] == [o.army for o in s.orders]


@properties
@given(scenarios())
def test_order_results_report_where_the_army_ends_and_agree_with_the_outcome(
    s: Scenario,
) -> None:
    """R4, R5, R9: held, blocked and rejected armies stay; moved ones end at the last step,
    stopped Unicorns at the first, reformed armies in the reform province."""
    # when
    result = s.run()
    # then
    start, after = _start(s), _after(result)
    orders = {o.army: o for o in s.orders}
    for r in result.orders:
        order, was = orders[r.army], start[r.army].province
        assert r.province == after[r.army].province
        expected = {
            Outcome.HELD: was,
            Outcome.BLOCKED: was,
            Outcome.REJECTED: was,
            Outcome.MOVED: order.move[-1] if order.move else None,
            Outcome.STOPPED: order.move[0] if order.move else None,
            Outcome.REFORMED: order.reform,
        }[r.outcome]
        assert r.province == expected, (r, order)
        assert (r.reason_code is not None) == (r.outcome is Outcome.REJECTED)


# --- where armies may end (R2, R4, R5.4, R9) -----------------------------------------------


@properties
@given(scenarios())
def test_armies_move_at_most_one_border_except_unicorn_double_moves(s: Scenario) -> None:
    """R4: an army ends where it was or next door; R5.4: two steps only for a moved Unicorn."""
    # when
    result = s.run()
    # then
    near = _neighbours(s)
    start, after = _start(s), _after(result)
    outcomes = {o.army: o.outcome for o in result.orders}
    for aid, was in start.items():
        now = after[aid].province
        if was.province is None or now == was.province or now in near[was.province]:
            continue
        assert was.clan == UNICORN and outcomes.get(aid) is Outcome.MOVED, (aid, was, now)
        assert any(now in near[p1] for p1 in near[was.province]), (aid, was, now)


@properties
@given(scenarios())
def test_armies_without_an_order_or_in_a_battle_stay_as_they_were(s: Scenario) -> None:
    """R4: no order is a hold; an army in a battle cannot give orders and stays in it."""
    # when
    result = s.run()
    # then
    ordered = {o.army for o in s.orders}
    after = _after(result)
    for a in s.state.armies:
        if a.id not in ordered or a.in_battle:
            assert after[a.id] == a


@properties
@given(scenarios())
def test_living_armies_stay_alive_and_destroyed_ones_come_back_only_by_reforming(
    s: Scenario,
) -> None:
    """R9: a turn destroys nobody; a destroyed army stays off the map unless it reforms."""
    # when
    result = s.run()
    # then
    after = _after(result)
    outcomes = {o.army: o.outcome for o in result.orders}
    for a in s.state.armies:
        if a.province is not None or outcomes.get(a.id) is Outcome.REFORMED:
            assert after[a.id].province is not None
        else:
            assert after[a.id] == a


@properties
@given(scenarios())
def test_reformed_armies_appear_in_a_controlled_home_castle_of_their_clan_in_time(
    s: Scenario,
) -> None:
    """R9: a reform names a castle home province of the clan that the clan controls at the
    start of the turn, from turn T + 2 after a loss and T + 1 after the winner's choice."""
    # when
    result = s.run()
    # then
    rows = {p["id"]: p for p in s.map_data["provinces"]}
    start, after = _start(s), _after(result)
    for r in result.orders:
        if r.outcome is not Outcome.REFORMED:
            continue
        was, now = start[r.army], after[r.army]
        assert was.province is None
        assert now.province is not None
        assert rows[now.province]["castle"]
        assert rows[now.province]["home_clan"] == was.clan
        assert s.state.control[now.province] == was.clan
        assert was.destroyed_in_turn is not None
        delay = 1 if was.destroyed_by == "winner" else 2
        assert s.state.turn >= was.destroyed_in_turn + delay


@properties
@given(scenarios())
def test_no_army_ends_in_an_impassable_province(s: Scenario) -> None:
    """R1, R2: nothing enters impassable terrain or an excluded clan's home provinces."""
    # when
    result = s.run()
    # then
    blocked = _blocked(s)
    for a in result.armies:
        assert a.province not in blocked, a


# --- moves: swaps (R5.2, R5.3) and Unicorn double moves (R5.4) ------------------------------


@properties
@given(scenarios())
def test_no_armies_of_different_clans_pass_each_other_on_a_border(s: Scenario) -> None:
    """R5.2: of two groups swapping across a border, with more than one clan, one stays."""
    # when
    result = s.run()
    # then
    start, after = _start(s), _after(result)
    crossings: dict[tuple[str, str], set[str]] = defaultdict(set)
    for aid, was in start.items():
        now = after[aid].province
        if was.province is not None and now is not None and now != was.province:
            crossings[(was.province, now)].add(was.clan)
    for (a, b), clans in crossings.items():
        back = crossings.get((b, a), set())
        assert not back or clans | back == clans == back, ((a, b), clans, back)


@properties
@given(scenarios())
def test_single_moves_are_carried_out_unless_the_losing_side_of_a_swap_conflict(
    s: Scenario,
) -> None:
    """R5.1, R5.2: moves do not bounce; in each conflict one whole side moves, the other is
    blocked, and one draw is reported per conflict; same-clan swaps pass freely."""
    # when
    result = s.run()
    # then
    start = _start(s)
    carried = _carried_out(s, result)
    groups: dict[tuple[str, str], list[Army]] = defaultdict(list)
    for aid, order in carried.items():
        was = start[aid].province
        if order.reform is None and len(order.move) == 1 and was is not None:
            groups[(was, order.move[0])].append(start[aid])
    conflicts = {
        (a, b)
        for (a, b) in groups
        if a < b and (b, a) in groups and len({x.clan for x in groups[(a, b)] + groups[(b, a)]}) > 1
    }
    draws = {d.provinces: d for d in result.draws}
    assert set(draws) == conflicts
    assert len(result.draws) == len(conflicts)
    outcomes = {o.army: o for o in result.orders}
    for (a, b), group in groups.items():
        pair = (a, b) if a < b else (b, a)
        moves = pair not in draws or draws[pair].moving_from == a
        for army in group:
            expected = (Outcome.MOVED, b) if moves else (Outcome.BLOCKED, a)
            assert (outcomes[army.id].outcome, outcomes[army.id].province) == expected


@properties
@given(scenarios())
def test_swap_conflicts_are_decided_by_the_scorpion_else_the_given_draw_else_at_random(
    s: Scenario,
) -> None:
    """R5.3, R11: with abilities on, a lone Scorpion side that agrees on on_swap decides
    (advance: it moves, stay: the other side moves); otherwise a given draw is used, else the
    side is drawn from the two provinces sorted, and the source is recorded."""
    # when
    result = s.run()
    # then
    start = _start(s)
    carried = _carried_out(s, result)
    for d in result.draws:
        a, b = d.provinces
        assert a < b
        sides: dict[str, list[Order]] = {a: [], b: []}
        for aid, order in carried.items():
            was = start[aid].province
            if order.reform is None and was in sides and order.move == ((b if was == a else a),):
                sides[was].append(order)
        scorpions = {
            side: {o.on_swap for o in orders if start[o.army].clan == SCORPION}
            for side, orders in sides.items()
        }
        lone = [side for side, choices in scorpions.items() if choices]
        if s.state.settings.clan_abilities and len(lone) == 1 and len(scorpions[lone[0]]) == 1:
            side = lone[0]
            other = b if side == a else a
            (choice,) = scorpions[side]
            assert d.method is DrawMethod.SCORPION
            assert d.on_swap == choice
            assert d.moving_from == (side if choice == "advance" else other)
        elif d.key in s.draws:
            assert d.method is DrawMethod.GIVEN
            assert d.moving_from == s.draws[d.key]
        else:
            assert d.method is DrawMethod.RANDOM
            assert d.choices == (a, b)
            assert d.moving_from in (a, b)
            assert d.source == s.rng_label


# R5.4 with R9: a Crab army reforming in P1 stops the Unicorn there (too rare to draw).
_UNICORN_MEETS_REFORM = scenario_from(
    {
        "provinces": [
            {"id": "p0", "home_clan": "unicorn", "castle": True},
            {"id": "p1", "home_clan": "crab", "castle": True},
            {"id": "p2", "home_clan": None, "castle": False},
        ],
        "borders": [["p0", "p1"], ["p1", "p2"]],
    },
    armies=[
        Army("unicorn-1", "unicorn", "p0"),
        Army("crab-1", "crab", None, destroyed_in_turn=1, destroyed_by="loss"),
    ],
    orders=[Order("unicorn-1", move=("p1", "p2")), Order("crab-1", reform="p1")],
    turn=3,
)


@properties
@given(scenarios())
@example(_UNICORN_MEETS_REFORM)
def test_unicorn_double_moves_need_empty_provinces_and_stop_where_another_clan_enters(
    s: Scenario,
) -> None:
    """R5.4: A→P1→P2 is carried out only for a Unicorn, abilities on, along borders into
    passable provinces that held no army at the start, P2 ≠ A; it stops in P1 exactly when
    an army of another clan ends in P1."""
    # when
    result = s.run()
    # then
    near, start, blocked = _neighbours(s), _start(s), _blocked(s)
    occupied = _occupied(s)
    clans_after = _clans_by_province(result.armies)
    outcomes = {o.army: o.outcome for o in result.orders}
    for aid, order in _carried_out(s, result).items():
        if order.reform is not None or len(order.move) != 2:
            continue
        was = start[aid]
        assert was.province is not None
        p1, p2 = order.move
        assert was.clan == UNICORN and s.state.settings.clan_abilities
        assert p1 in near[was.province] and p2 in near[p1] and p2 != was.province
        assert not {p1, p2} & (occupied | blocked)
        entered = clans_after.get(p1, set()) - {UNICORN}
        assert outcomes[aid] is (Outcome.STOPPED if entered else Outcome.MOVED)


# --- determinism and draws (R11) --------------------------------------------------------


@properties
@given(scenarios())
def test_the_same_input_draws_and_seed_give_the_same_result(s: Scenario) -> None:
    """R11: adjudicating is a pure function of the state, the orders, the draws and the seed."""
    # when
    first = s.run()
    second = s.run()
    # then
    assert result_to_dict(first) == result_to_dict(second)


class _NoRandom:
    """A random source that fails the test when used."""

    def choice(self, seq: Sequence[str], /) -> str:
        raise AssertionError(f"a random draw from {seq} although every draw was given")


@properties
@given(scenarios())
def test_the_reported_draws_given_back_reproduce_the_turn_without_new_draws(
    s: Scenario,
) -> None:
    """R11: feeding the reported draws back as given draws replays the turn exactly."""
    # given
    played = s.run()
    replay = {d.key: d.moving_from for d in played.draws}
    # when
    again = s.run(draws=replay, rng=_NoRandom())
    # then
    assert again.armies == played.armies
    assert again.orders == played.orders
    assert again.control == played.control
    assert [(d.key, d.moving_from) for d in again.draws] == [
        (d.key, d.moving_from) for d in played.draws
    ]


@properties
@given(scenarios())
def test_a_turn_written_as_a_case_file_reads_back_to_the_same_result(s: Scenario) -> None:
    """R11: a turn exported as a case file (with its draws and seed) replays identically,
    so every failing example printed by these tests can be run with ``adjudicate``."""
    # given
    text = json.dumps(s.as_case(), ensure_ascii=False)
    # when
    replayed = case_run(case_from_json(text))
    # then
    assert result_to_dict(replayed) == result_to_dict(s.run())


@properties
@given(scenarios())
def test_the_printed_json_text_is_the_text_json_dumps_writes(s: Scenario) -> None:
    """The command's output (docs/adjudication.md, "Output"), indented or --compact, is
    json.dumps of the output document to the byte."""
    # given
    result = s.run()
    # when, then
    for indent in (None, 2):
        expected = json.dumps(result_to_dict(result), indent=indent, ensure_ascii=False)
        assert result_to_json(result, indent=indent) == expected


# Four province ids where sorting the pairs and sorting the keys disagree: ("p1", "p9")
# comes before ("p10", "p2"), but the key "p10|p2" comes before "p1|p9". With seed 4 the two
# orders draw different sides; the engine once drew in the order of the pairs.
_KEY_ORDER_MAP = {
    "provinces": [
        {"id": pid, "home_clan": None, "castle": False} for pid in ("p1", "p9", "p10", "p2")
    ],
    "borders": [["p1", "p9"], ["p10", "p2"], ["p9", "p10"]],
}
_KEY_ORDER_CASE = scenario_from(
    _KEY_ORDER_MAP,
    armies=[
        Army("crab-1", "crab", "p1"),
        Army("lion-1", "lion", "p9"),
        Army("crab-2", "crab", "p10"),
        Army("lion-2", "lion", "p2"),
    ],
    orders=[
        Order("crab-1", move=("p9",)),
        Order("lion-1", move=("p1",)),
        Order("crab-2", move=("p2",)),
        Order("lion-2", move=("p10",)),
    ],
    seed=4,
)


@properties
@given(scenarios())
@example(_KEY_ORDER_CASE)
def test_random_draws_are_made_in_the_sorted_order_of_their_keys(s: Scenario) -> None:
    """R11, docs/adjudication.md: random draws are made in the sorted order of their keys,
    each with ``choice`` over the two provinces sorted, so that a seed gives the same draws
    to anyone who replays the turn by the documented procedure."""
    # when
    result = s.run()
    # then
    rng = random.Random(s.seed)
    random_draws = sorted(
        (d for d in result.draws if d.method is DrawMethod.RANDOM), key=lambda d: d.key
    )
    for d in random_draws:
        assert d.moving_from == rng.choice(sorted(d.provinces)), d.key


# --- control (R6) -------------------------------------------------------------------------


@properties
@given(scenarios())
def test_control_changes_only_to_the_one_clan_holding_a_province_without_a_battle(
    s: Scenario,
) -> None:
    """R6: a province changes hands only when, after the moves, it holds armies of exactly
    one clan and no battle is going on there, and then it passes to that clan."""
    # when
    result = s.run()
    # then
    battles = _battles(s)
    clans_after = _clans_by_province(result.armies)
    assert set(result.control) == set(s.state.control)
    for pid, before in s.state.control.items():
        if result.control[pid] != before:
            assert pid not in battles
            assert clans_after.get(pid) == {result.control[pid]}


@properties
@given(scenarios())
def test_provinces_with_a_battle_going_on_never_change_hands(s: Scenario) -> None:
    """R6, R8: control of a battle's province waits until the battle ends."""
    # when
    result = s.run()
    # then
    for pid in _battles(s):
        assert result.control[pid] == s.state.control[pid]


@properties
@given(scenarios())
def test_a_lone_clan_takes_the_province_when_one_of_its_armies_claims_it(s: Scenario) -> None:
    """R6: a province without a battle whose armies are all of one clan passes to that clan
    if at least one of them claims (no ``claim: false`` in an order carried out); if none
    claims, the controller stays."""
    # when
    result = s.run()
    # then
    battles = _battles(s)
    claims = _claims(s, result)
    present: dict[str, list[Army]] = defaultdict(list)
    for a in result.armies:
        if a.province is not None:
            present[a.province].append(a)
    for pid, armies in present.items():
        clans = {a.clan for a in armies}
        if pid in battles or len(clans) != 1:
            continue
        if any(claims[a.id] for a in armies):
            assert result.control[pid] == armies[0].clan
        else:
            assert result.control[pid] == s.state.control[pid]


# --- scores (R12) and Small Farms (R7) ----------------------------------------------------


@properties
@given(scenarios())
def test_scores_are_two_per_home_province_one_per_other_and_one_per_castle(
    s: Scenario,
) -> None:
    """R12: each clan in the game scores 2 per home province it controls, 1 per other
    province, +1 per castle province; excluded clans do not score (R1)."""
    # when
    result = s.run()
    # then
    in_game = [c for c in s.state.settings.clans]
    expected = dict.fromkeys(in_game, 0)
    for p in s.map_data["provinces"]:
        clan = result.control[p["id"]]
        if clan in expected:
            expected[clan] += (2 if p["home_clan"] == clan else 1) + (1 if p["castle"] else 0)
    assert result.scores == expected


@properties
@given(scenarios())
def test_small_farms_are_the_castles_held_beyond_the_castle_home_provinces(
    s: Scenario,
) -> None:
    """R7: Small Farms = max(0, castles controlled − the clan's castle home provinces)."""
    # when
    result = s.run()
    # then
    rows = s.map_data["provinces"]
    expected = {}
    for clan in s.state.settings.clans:
        held = sum(1 for p in rows if p["castle"] and result.control[p["id"]] == clan)
        starting = sum(1 for p in rows if p["castle"] and p["home_clan"] == clan)
        expected[clan] = max(0, held - starting)
    assert result.small_farms == expected


# --- meetings (R7) and reinforcements (R5.5, R8) ----------------------------------------


@properties
@given(scenarios())
def test_meetings_are_exactly_the_provinces_with_two_clans_and_no_battle(s: Scenario) -> None:
    """R7: every province without a battle that holds armies of two or more clans after the
    moves is a meeting listing all its armies (sorted, by province), and nothing else is."""
    # when
    result = s.run()
    # then
    battles = _battles(s)
    start = _start(s)
    present: dict[str, list[Army]] = defaultdict(list)
    for a in result.armies:
        if a.province is not None:
            present[a.province].append(a)
    expected = {
        pid: armies
        for pid, armies in present.items()
        if pid not in battles and len({a.clan for a in armies}) >= 2
    }
    assert [m.province for m in result.meetings] == sorted(expected)
    for m in result.meetings:
        armies = expected[m.province]
        assert m.armies == tuple(sorted(a.id for a in armies))
        assert not any(a.in_battle for a in armies)
        assert m.new == any(start[a.id].province != m.province for a in armies)


@properties
@given(scenarios())
def test_reinforcements_are_the_armies_entering_a_battle_going_on_at_the_start(
    s: Scenario,
) -> None:
    """R5.5, R8: armies that end their move or reform in a province with a battle going on
    join it (in_battle afterwards); reinforcements happen nowhere else."""
    # when
    result = s.run()
    # then
    battles = _battles(s)
    start, after = _start(s), _after(result)
    expected: dict[str, list[str]] = defaultdict(list)
    for aid, was in start.items():
        now = after[aid].province
        if now in battles and now != was.province:
            expected[now].append(aid)
    assert [r.province for r in result.reinforcements] == sorted(expected)
    for r in result.reinforcements:
        assert r.province in battles
        assert r.armies == tuple(sorted(expected[r.province]))
        assert all(after[aid].in_battle for aid in r.armies)
    joined = {aid for r in result.reinforcements for aid in r.armies}
    for aid, was in start.items():
        if aid not in joined:
            assert after[aid].in_battle == was.in_battle


# --- rejected orders (R4) -----------------------------------------------------------------


@properties
@given(scenarios())
def test_rejected_orders_leave_the_army_exactly_where_and_as_it_was(s: Scenario) -> None:
    """R4: an order that is not clear is rejected with a reason and the army stays."""
    # when
    result = s.run()
    # then
    start, after = _start(s), _after(result)
    for r in result.orders:
        if r.outcome is Outcome.REJECTED:
            assert after[r.army] == start[r.army]
            assert r.province == start[r.army].province
            assert r.reason_code and r.reason_text


@properties
@given(scenarios())
def test_late_orders_and_orders_for_armies_in_a_battle_are_rejected(s: Scenario) -> None:
    """R4: an order after the deadline is not carried out; a General in a battle cannot
    give orders."""
    # when
    result = s.run()
    # then
    start = _start(s)
    outcomes = {o.army: o for o in result.orders}
    for order in s.orders:
        if order.late:
            assert outcomes[order.army].reason_code == "late"
        elif start[order.army].in_battle:
            assert outcomes[order.army].reason_code == "in_battle"


@properties
@given(scenarios())
def test_carried_out_single_moves_follow_a_border_into_a_passable_province(
    s: Scenario,
) -> None:
    """R4: a move is carried out only to an adjacent, passable province."""
    # when
    result = s.run()
    # then
    near, start, blocked = _neighbours(s), _start(s), _blocked(s)
    for aid, order in _carried_out(s, result).items():
        if order.reform is None and len(order.move) == 1:
            was = start[aid].province
            assert was is not None
            assert order.move[0] in near[was]
            assert order.move[0] not in blocked


def test_draw_key_sorts_and_joins_the_two_provinces() -> None:
    """R11: the key of a swap draw names the border whichever way round it is given."""
    assert draw_key("p2", "p10") == draw_key("p10", "p2") == "p10|p2"
