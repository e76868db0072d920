"""A deterministic tournament for the fault tests, and a fingerprint of what it left behind.

Eight players (one General per clan) on the bundled map play ``TURNS`` turns with the orders
of ``SCENARIO``. No turn has a swap conflict, the only place where the engine draws at
random (R5.2), so the scenario has one correct outcome: played with faults or without, the
fingerprint must come out the same. Along the way it has what a fault could spoil: moves,
a Unicorn double move (R5.4), an order changed and one withdrawn (R4), ``claim: false``
(R6), meetings that open battle tables (R7) and tables that disperse when an army leaves.

A fault test plays it against real clocks without racing them: every turn is held open
(``HELD_TURN_SECONDS``, far longer than a test) until the harness has seen it open and given
its orders, and only then does the harness set the time left, as a judge does
(``clock_extend`` by the difference, through the API or ``tests.judge_clock.time_left_set``):
the clocks then act at that deadline, and a slow machine only makes the turn longer. Every
order is given before the deadline (R4), so none may be refused as late. A clock setting is
a change of its own (a log line, a version); ``fingerprint_without_clock_settings`` takes
the harness's ones out before the comparison with the reference, which has none.

Typical use (inside a database test, with the ``make_running_tournament`` fixture)::

    expected = scenario_reference(make_running_tournament)
    tournament = scenario_start(make_running_tournament, turn_seconds=HELD_TURN_SECONDS)
    ... for each turn, once it is open: scenario_orders_give(tournament.pk, turn=n),
    ...     then time_left_set(tournament.pk, turn=n, seconds=1, actor=judge);
    ... once it is resolved: progress[n] = turn_progress(tournament.pk)
    assert not exactly_once_problems(tournament.pk)
    assert not orders_problems(tournament.pk, acknowledged)
    actual, settings = fingerprint_without_clock_settings(
        scenario_fingerprint(tournament.pk, progress), by=judge.label
    )
    assert settings == TURNS and not fingerprint_differences(expected, actual)

These functions are imported by several fault test modules: keep their names and meaning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from battles.models import Battle
from referees.models import LogEntry, Player, Tournament
from referees.services import (
    OrderInput,
    TournamentError,
    clock_tick,
    order_give,
)
from strategic_map.models import Army, Order, Turn

TURNS = 6
PLAYERS = 8  # one General per clan; army codes are "<clan>-1"
# The reference plays with simulated deadlines; a long turn keeps every real clock (a beat
# sweep running next to it) away from its deadlines.
REFERENCE_TURN_SECONDS = 3600
# The log action of a judge's clock setting (``clock_extend``).
CLOCK_SETTING = "clock_extended"


@dataclass(frozen=True)
class OrderStep:
    """One order a General gives: ``move`` along ``path``, ``hold``, or ``withdraw``."""

    clan: str
    kind: str
    path: tuple[str, ...] = ()
    claim: bool = True

    @property
    def army(self) -> str:
        return f"{self.clan}-1"

    def order_input(self, turn: int) -> OrderInput:
        """The service's input; ``turn`` makes a late order refused rather than carried over."""
        return OrderInput(kind=self.kind, path=self.path, claim=self.claim, turn=turn)

    def api_body(self, turn: int) -> dict[str, Any] | None:
        """The body of ``PUT …/orders/mine``; ``None`` for a withdrawal (``DELETE``)."""
        if self.kind == Order.Kind.WITHDRAW:
            return None
        return {"kind": self.kind, "path": list(self.path), "claim": self.claim, "turn": turn}


def _move(clan: str, *path: str, claim: bool = True) -> OrderStep:
    return OrderStep(clan=clan, kind=Order.Kind.MOVE, path=path, claim=claim)


# Start (castle homes): crab-hida, crane-daidoji, dragon-mirumoto, lion-akodo, phoenix-isawa,
# scorpion-bayushi, shadowlands-shi, unicorn-shinjo. Steps of a turn are given in this order.
SCENARIO: Mapping[int, Sequence[OrderStep]] = {
    1: (),
    2: (
        _move("crab", "shinomen-mori"),
        _move("crane", "crane-kakita"),
        _move("lion", "lion-matsu"),
        _move("phoenix", "phoenix-agasha"),
        _move("scorpion", "scorpion-shosuro"),
        _move("shadowlands", "shadowlands-wastes"),
        _move("unicorn", "unicorn-ide"),
    ),
    3: (
        _move("crab", "lion-kitsu"),
        _move("shadowlands", "shinomen-mori"),  # where the Crab leaves: no swap
        _move("lion", "beiden-pass"),
        _move("scorpion", "beiden-pass"),  # meeting at beiden-pass
        _move("phoenix", "seppun"),
        _move("crane", "seppun"),  # meeting at seppun
        _move("unicorn", "lion-akodo", "dragon-tamori"),  # both empty: the double move
        OrderStep(clan="dragon", kind=Order.Kind.HOLD),
    ),
    4: (
        _move("lion", "lion-ikoma"),  # the beiden-pass table disperses
        _move("crab", "unicorn-iuchi"),
        _move("dragon", "unicorn-shinjo"),
        _move("unicorn", "dragon-kitsuki"),
        _move("shadowlands", "crab-hida"),
    ),
    5: (
        _move("crab", "unicorn-utaku"),
        _move("dragon", "unicorn-utaku"),  # meeting at unicorn-utaku
        _move("unicorn", "toshi-ranbo"),
        _move("shadowlands", "crab-kaiu"),
        _move("lion", "kitsune-mori"),
        _move("scorpion", "scorpion-yogo"),
        _move("crane", "otosan-uchi"),  # the seppun table disperses
    ),
    6: (
        _move("phoenix", "toshi-ranbo"),  # meeting with the Unicorn there
        _move("crane", "seppun", claim=False),  # the Phoenix keep seppun
        _move("shadowlands", "crab-yasuki"),
        _move("lion", "lion-ikoma"),
        _move("lion", "dragon-kitsuki"),  # changed: the latest order counts
        _move("scorpion", "scorpion-bayushi"),
        OrderStep(clan="scorpion", kind=Order.Kind.WITHDRAW),  # the Scorpion stays
        _move("dragon", "unicorn-iuchi"),  # the unicorn-utaku table disperses
    ),
}

# Turn → the province of a battle table that turn's resolution disperses (an UPDATE of that
# Battle row late in the resolving transaction, after OPEN → RESOLVING and the new board).
DISPERSALS: Mapping[int, str] = {4: "beiden-pass", 5: "seppun", 6: "unicorn-utaku"}


def scenario_start(
    make_running_tournament: Callable[..., Tournament],
    *,
    turn_seconds: int,
    name: str = "",
    now: datetime | None = None,
) -> Tournament:
    """The scenario's tournament through the services (the conftest fixture), turn 1 open
    until ``now + turn_seconds``; ``now`` defaults to the present, a later one delays turn 1.
    """
    return make_running_tournament(
        now=now,
        turn_seconds=turn_seconds,
        player_count=PLAYERS,
        turns_total=TURNS,
        name=name or "Fault scenario",
    )


def scenario_orders_give(
    tournament_id: int, *, turn: int, now: datetime | None = None
) -> list[int]:
    """Give ``turn``'s orders as each General would, at ``now`` (the present by default);
    the ids of the stored orders.

    A refusal (late, or the scenario no longer fits the board) is an ``AssertionError``
    naming the order: the scenario's outcome would no longer be the reference's.
    """
    acknowledged = []
    for step in SCENARIO[turn]:
        player = Player.objects.select_related("army", "tournament").get(
            tournament_id=tournament_id, role=Player.Role.GENERAL, army__code=step.army
        )
        try:
            order = order_give(
                player=player, order=step.order_input(turn), now=now or timezone.now()
            )
        except TournamentError as refused:
            raise AssertionError(
                f"turn {turn}: {step} refused ({refused.code}): {refused.message}"
            ) from refused
        acknowledged.append(order.pk)
    return acknowledged


@dataclass(frozen=True)
class Progress:
    """A tournament as one query saw it: how far the turns are, the board and its version."""

    phase: str
    resolved: int  # how many turns are resolved
    open_turn: int | None
    deadline: datetime | None
    version: int
    board: dict[str, Any]


def turn_progress(tournament_id: int) -> Progress:
    """Read in a single statement (one snapshot), so the board and version match the count."""
    turns = Turn.objects.filter(campaign=OuterRef("campaign_id")).order_by()
    resolved = (
        turns.filter(status=Turn.Status.RESOLVED)
        .values("campaign")
        .annotate(n=Count("pk"))
        .values("n")
    )
    open_turn = turns.filter(status=Turn.Status.OPEN).order_by("-number").values("number")[:1]
    row = (
        Tournament.objects.filter(pk=tournament_id)
        .annotate(
            version=F("campaign__version"),
            board=F("campaign__board"),
            resolved=Coalesce(Subquery(resolved), 0),
            open_turn=Subquery(open_turn),
        )
        .values("phase", "resolved", "open_turn", "deadline", "version", "board")
        .get()
    )
    return Progress(**row)


@dataclass
class Played:
    """What a run of the scenario gave back: the progress read after each turn, and the ids
    of the orders acknowledged in each turn."""

    tournament_id: int
    progress: dict[int, Progress]
    acknowledged: dict[int, list[int]]


def scenario_play_inprocess(
    make_running_tournament: Callable[..., Tournament],
    *,
    name: str = "Fault reference",
    before_resolve: Callable[[int, int], None] | None = None,
) -> Played:
    """Play the whole scenario in this process, each turn resolved by ``clock_tick`` at its
    (simulated) deadline; ``before_resolve(tournament_id, turn)`` runs just before."""
    tournament = scenario_start(
        make_running_tournament, turn_seconds=REFERENCE_TURN_SECONDS, name=name
    )
    played = Played(tournament_id=tournament.pk, progress={}, acknowledged={})
    for turn in range(1, TURNS + 1):
        deadline = turn_progress(tournament.pk).deadline
        assert deadline is not None, f"turn {turn} has no deadline"
        # In the turn's simulated time: an order is dated by its arrival, and one that
        # arrived before its turn opened would be refused as late (R4).
        played.acknowledged[turn] = scenario_orders_give(
            tournament.pk, turn=turn, now=deadline - timedelta(seconds=1)
        )
        if before_resolve is not None:
            before_resolve(tournament.pk, turn)
        assert clock_tick(tournament_id=tournament.pk, now=deadline), f"turn {turn} not resolved"
        played.progress[turn] = turn_progress(tournament.pk)
    return played


def scenario_reference(make_running_tournament: Callable[..., Tournament]) -> dict[str, Any]:
    """The fingerprint of the scenario played without any fault (``scenario_play_inprocess``).

    Raises ``AssertionError`` if the scenario stopped being conflict-free.
    """
    played = scenario_play_inprocess(make_running_tournament)
    fingerprint = scenario_fingerprint(played.tournament_id, played.progress)
    draws = [t["number"] for t in fingerprint["turns"] if (t["result"] or {}).get("draws")]
    assert not draws, f"the scenario has swap draws in turns {draws}: its outcome is random"
    return fingerprint


def _without(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def scenario_fingerprint(
    tournament_id: int, progress: Mapping[int, Progress] | None = None
) -> dict[str, Any]:
    """Everything a fault could change, without ids and times, as plain JSON-like data.

    Per turn: its status, every order given in it (replaced and withdrawn ones too), the
    case it was resolved from (the board before it and the orders carried out, without the
    map), its result (moves, meetings, control, scores), and, from ``progress`` (what
    ``turn_progress`` read once the turn was resolved), the stored board and the campaign
    version then. At the end: phase, board, version, the battle tables, and the log from
    turn 1 on (set-up differs with the turn length, which is not the point here).
    """
    tournament = Tournament.objects.select_related("campaign").get(pk=tournament_id)
    campaign = tournament.campaign
    codes = dict(Army.objects.filter(campaign=campaign).values_list("pk", "code"))
    turns = []
    for turn in Turn.objects.filter(campaign=campaign).order_by("number", "id"):
        orders = [
            {
                "army": codes[order.army_id],
                "kind": order.kind,
                "path": order.path,
                "reform": order.reform,
                "claim": order.claim,
                "on_swap": order.on_swap,
                "author": order.author,
                "by_judge": order.by_judge,
            }
            for order in Order.objects.filter(turn=turn).order_by("id")
        ]
        seen = (progress or {}).get(turn.number)
        turns.append(
            {
                "number": turn.number,
                "status": turn.status,
                "resolved_by": turn.resolved_by,
                "orders": orders,
                # A turn's seed is secret and new every run (R11): only what it decides counts.
                "case": _without(turn.case, "map", *SEEDED) if turn.case else None,
                "result": turn.result,
                "board_after": seen.board if seen else None,
                "version_after": seen.version if seen else None,
            }
        )
    battles = [
        {
            "province": battle.province,
            "opened_turn": battle.opened_turn,
            "status": battle.status,
            "seats": sorted(
                (seat.army.code, seat.vote, seat.joined_turn, seat.reinforcement)
                for seat in battle.seats.select_related("army")
            ),
        }
        for battle in Battle.objects.filter(tournament=tournament).order_by(
            "opened_turn", "province", "id"
        )
    ]
    entries = list(LogEntry.objects.filter(tournament=tournament).order_by("id"))
    first = next((i for i, e in enumerate(entries) if e.action == "turn_opened"), len(entries))
    log = [
        {
            "action": entry.action,
            "turn": entry.turn,
            "actor": entry.actor,
            "reason": entry.reason,
            # ids and times differ between runs, and so do the seeds and commitments (R11)
            "data": _without(entry.data, "battle", "player", "changed", *SEEDED),
        }
        for entry in entries[first:]
    ]
    return {
        "phase": tournament.phase,
        "board": campaign.board,
        "version": campaign.version,
        "turns": turns,
        "battles": battles,
        "log": log,
    }


# The fields that hold a turn's secret seed or its commitment (R11), new in every run.
SEEDED = ("draw_seed", "commitment")


def fingerprint_differences(
    expected: Any, actual: Any, path: str = "", limit: int = 12
) -> list[str]:
    """Where two fingerprints differ, as ``path: expected != actual`` lines (at most ``limit``)."""
    found: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                walk(a.get(key, "<missing>"), b.get(key, "<missing>"), f"{where}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            found.append(f"{where or '.'}: {a!r:.300} != {b!r:.300}")

    walk(expected, actual, path)
    return found


def fingerprint_without_clock_settings(
    fingerprint: Mapping[str, Any], *, by: str
) -> tuple[dict[str, Any], int]:
    """``fingerprint`` as if the clock settings ``by`` made (the actor label of the judge the
    harness sets each turn's time left as) had not been made; and how many there were.

    Each setting is an operation of its own: one ``clock_extended`` log line and one
    version. Its line goes; the final version, and each turn's ``version_after``, are
    lowered by the settings logged before them (before that turn's ``turn_resolved``
    line). Nothing else changes: every other line, a setting by anyone else, and any other
    version step still show. Compare the count with the settings the harness made.
    """
    copy = {**fingerprint}
    log, before, settings = [], {}, 0
    for entry in fingerprint["log"]:
        if entry["action"] == CLOCK_SETTING and entry["actor"] == by:
            settings += 1
            continue
        if entry["action"] == "turn_resolved":
            before[entry["turn"]] = settings
        log.append(entry)
    copy["log"] = log
    copy["version"] = fingerprint["version"] - settings
    copy["turns"] = [
        {
            **turn,
            "version_after": turn["version_after"] - before.get(turn["number"], settings)
            if turn["version_after"] is not None
            else None,
        }
        for turn in fingerprint["turns"]
    ]
    return copy, settings


def exactly_once_problems(tournament_id: int, *, turns: int = TURNS) -> list[str]:
    """What breaks "every turn resolved exactly once"; empty when nothing does.

    Turn rows 1..turns, one each, all resolved (none left open or RESOLVING); one
    ``turn_resolved`` log line per turn; the game ended once.
    """
    problems = []
    tournament = Tournament.objects.get(pk=tournament_id)
    rows = list(
        Turn.objects.filter(campaign=tournament.campaign_id)
        .order_by("number", "id")
        .values_list("number", "status")
    )
    numbers = [number for number, _ in rows]
    if numbers != list(range(1, turns + 1)):
        problems.append(f"turn rows {numbers}, expected 1..{turns} once each")
    stuck = [(number, status) for number, status in rows if status != Turn.Status.RESOLVED]
    if stuck:
        problems.append(f"turns not resolved: {stuck}")
    actions = Counter(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved").values_list(
            "turn", flat=True
        )
    )
    if actions != Counter(range(1, turns + 1)):
        problems.append(f"turn_resolved log lines per turn: {dict(sorted(actions.items()))}")
    ended = LogEntry.objects.filter(tournament=tournament, action="game_ended").count()
    if ended != 1 or tournament.phase != Tournament.Phase.FINISHED:
        problems.append(f"phase {tournament.phase} with {ended} game_ended log lines")
    return problems


def orders_problems(tournament_id: int, acknowledged: Mapping[int, Sequence[int]]) -> list[str]:
    """What breaks "no order lost"; empty when nothing does.

    ``acknowledged`` maps a turn to the ids of the orders the services stored for it (as
    ``scenario_orders_give`` returns them). Each must be an order of that turn; the latest
    one of each army must be the one the turn was resolved with (withdrawn: none), and a
    move must have taken the army to the end of its path.
    """
    problems = []
    campaign_id = Tournament.objects.values_list("campaign_id", flat=True).get(pk=tournament_id)
    turns = {t.number: t for t in Turn.objects.filter(campaign_id=campaign_id)}
    for number, ids in sorted(acknowledged.items()):
        turn = turns.get(number)
        if turn is None:
            problems.append(f"turn {number}: no such turn")
            continue
        stored = {o.pk: o for o in Order.objects.filter(pk__in=ids).select_related("army")}
        lost = [pk for pk in ids if pk not in stored or stored[pk].turn_id != turn.pk]
        if lost:
            problems.append(f"turn {number}: acknowledged orders {lost} are not in the turn")
        latest = {stored[pk].army.code: stored[pk] for pk in ids if pk in stored}
        carried = {row["army"]: row for row in (turn.case or {}).get("orders", [])}
        ended = {row["army"]: row for row in (turn.result or {}).get("orders", [])}
        for code, order in sorted(latest.items()):
            if order.kind == Order.Kind.WITHDRAW:
                if code in carried:
                    problems.append(f"turn {number}: {code} withdrew, yet {carried[code]} ran")
                continue
            if code not in carried or carried[code].get("move", []) != order.path:
                problems.append(f"turn {number}: {code} {order.path} ran as {carried.get(code)}")
            if order.path and ended.get(code, {}).get("province") != order.path[-1]:
                problems.append(f"turn {number}: {code} ended as {ended.get(code)}")
    return problems
