"""The fault tests' scenario does what it was written for, and its checks can fail.

In process, on the default database (SQLite in the first ``make test`` pass): the fault
modules compare real runs with this scenario's reference, so the reference must be
deterministic and a lost order or a second resolution must show.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from referees.models import LogEntry, Tournament
from referees.services import Actor
from strategic_map.models import Order, Turn
from tests.faults.scenario import (
    DISPERSALS,
    TURNS,
    exactly_once_problems,
    fingerprint_differences,
    fingerprint_without_clock_settings,
    orders_problems,
    scenario_fingerprint,
    scenario_play_inprocess,
    scenario_reference,
    turn_progress,
)
from tests.judge_clock import time_left_set

pytestmark = pytest.mark.django_db


def test_the_scenario_has_no_draw_and_the_moves_meetings_and_dispersals_it_was_written_for(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """No swap draw anywhere (one correct outcome); meetings open tables that disperse in
    the turns ``DISPERSALS`` names; the double move, the changed order, the withdrawal and
    ``claim: false`` end where R4-R6 say."""
    # when
    played = scenario_play_inprocess(make_running_tournament)
    fingerprint = scenario_fingerprint(played.tournament_id, played.progress)

    # then
    results = {t["number"]: t["result"] for t in fingerprint["turns"]}
    assert all(not result["draws"] for result in results.values())
    meetings = {
        n: sorted(m["province"] for m in r["meetings"] if m["new"]) for n, r in results.items()
    }
    assert meetings == {
        1: [],
        2: [],
        3: ["beiden-pass", "seppun"],
        4: [],
        5: ["unicorn-utaku"],
        6: ["toshi-ranbo"],
    }
    dispersed = {
        (e["turn"], e["data"]["province"])
        for e in fingerprint["log"]
        if e["action"] == "battle_dispersed"
    }
    assert dispersed == set(DISPERSALS.items())
    armies = fingerprint["board"]["armies"]
    assert armies["unicorn-1"]["province"] == "toshi-ranbo"
    assert results[3]["armies"][7] == {
        "id": "unicorn-1",
        "clan": "unicorn",
        "province": "dragon-tamori",
        "destroyed": False,
        "in_battle": False,
    }
    assert armies["lion-1"]["province"] == "dragon-kitsuki"  # the changed order
    assert armies["scorpion-1"]["province"] == "scorpion-yogo"  # withdrawn
    assert fingerprint["board"]["control"]["seppun"] == "phoenix"  # claim: false
    versions = [t["version_after"] for t in fingerprint["turns"]]
    assert versions == sorted(set(versions)) and len(versions) == TURNS
    assert not exactly_once_problems(played.tournament_id)
    assert not orders_problems(played.tournament_id, played.acknowledged)


def test_two_fault_free_runs_have_the_same_fingerprint_and_a_lost_order_changes_it(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The reference is deterministic; an acknowledged order that disappears before its
    turn is resolved is reported by ``orders_problems`` and changes the fingerprint."""
    # given
    expected = scenario_reference(make_running_tournament)
    again = scenario_reference(make_running_tournament)

    def lose_the_lions_last_order(tournament_id: int, turn: int) -> None:
        if turn == TURNS:
            Order.objects.filter(
                turn__campaign__tournament=tournament_id, army__code="lion-1"
            ).latest("id").delete()

    # when
    lossy = scenario_play_inprocess(
        make_running_tournament, name="Lossy", before_resolve=lose_the_lions_last_order
    )

    # then
    assert fingerprint_differences(expected, again) == []
    assert orders_problems(lossy.tournament_id, lossy.acknowledged)
    differences = fingerprint_differences(
        expected, scenario_fingerprint(lossy.tournament_id, lossy.progress)
    )
    assert any(".turns[5]" in line for line in differences), differences


def test_exactly_once_problems_reports_a_second_resolution_and_a_turn_left_resolving(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """A second ``turn_resolved`` line and a turn stuck in RESOLVING are both reported."""
    # given
    played = scenario_play_inprocess(make_running_tournament)
    tournament = Tournament.objects.get(pk=played.tournament_id)

    # when
    LogEntry.objects.create(
        tournament=tournament, at=timezone.now(), actor="clock", action="turn_resolved", turn=2
    )
    Turn.objects.filter(campaign=tournament.campaign_id, number=3).update(
        status=Turn.Status.RESOLVING
    )

    # then
    problems = exactly_once_problems(played.tournament_id)
    assert any("turn_resolved" in p and "2: 2" in p for p in problems), problems
    assert any("resolving" in p for p in problems), problems


def test_the_harness_clock_settings_leave_the_fingerprint_and_nobody_elses_change_does(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The fault runs set each turn's time left once its orders are in, as a judge does:
    taken out (log line and version), their runs match the reference; the same settings
    by another judge are not taken out, so a change the harness did not make still shows."""
    # given
    expected = scenario_reference(make_running_tournament)
    harness = Actor(label="judge fixture-judge", judge=True)  # the fixture's judge
    other = Actor(label="judge someone-else", judge=True)

    def set_by(actor: Actor) -> Callable[[int, int], None]:
        def set_time_left(tournament_id: int, turn: int) -> None:
            # After the orders (given 1 s before the deadline), 1 s left of 2: the deadline
            # moves to when the orders were given, and the reference's tick still finds it.
            deadline = turn_progress(tournament_id).deadline
            assert deadline is not None
            moved = time_left_set(
                tournament_id,
                turn=turn,
                seconds=1,
                actor=actor,
                now=deadline - timedelta(seconds=2),
            )
            assert moved == deadline - timedelta(seconds=1)

        return set_time_left

    # when
    held = scenario_play_inprocess(
        make_running_tournament, name="Held", before_resolve=set_by(harness)
    )
    elsewhere = scenario_play_inprocess(
        make_running_tournament, name="Set by another", before_resolve=set_by(other)
    )

    # then
    raw = scenario_fingerprint(held.tournament_id, held.progress)
    actual, settings = fingerprint_without_clock_settings(raw, by=harness.label)
    assert settings == TURNS
    assert fingerprint_differences(expected, actual) == []
    assert fingerprint_differences(expected, raw)
    assert not exactly_once_problems(held.tournament_id)
    assert not orders_problems(held.tournament_id, held.acknowledged)
    unexplained, none = fingerprint_without_clock_settings(
        scenario_fingerprint(elsewhere.tournament_id, elsewhere.progress), by=harness.label
    )
    assert none == 0
    differences = fingerprint_differences(expected, unexplained, limit=100)
    assert any(line.startswith(".version:") for line in differences), differences
    kept = [e for e in unexplained["log"] if e["action"] == "clock_extended"]
    assert [e["actor"] for e in kept] == [other.label] * TURNS
