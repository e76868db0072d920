"""The log as the judges read it: filtered for the console, a played turn as a case file,
and the missed deadlines no judge has ruled on yet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from referees.kernel.deadlines import orders_around_deadline
from referees.models import LogEntry, Tournament
from referees.texts.log import log_actor_player, log_context, log_kind, log_text
from strategic_map.models import Army, Turn


@dataclass(frozen=True)
class LogFilter:
    """Which log entries the console asks for; an empty field does not filter."""

    turn: int | None = None
    army: str = ""
    clan: str = ""
    kind: str = ""

    def __bool__(self) -> bool:
        return bool(self.turn is not None or self.army or self.clan or self.kind)


def _log_row(e: LogEntry) -> dict[str, Any]:
    return {
        "id": e.pk,
        "at": e.at.isoformat(),
        "by": e.actor,
        "action": e.action,
        "turn": e.turn,
        "reason": e.reason,
        "data": e.data,
    }


def _army_codes_in(value: Any) -> set[str]:
    """Every string in an entry's data: army codes among them (they are never split up)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, Mapping):
        return set(map(str, value)) | {s for v in value.values() for s in _army_codes_in(v)}
    if isinstance(value, list):
        return {s for v in value for s in _army_codes_in(v)}
    return set()


def _log_matcher(tournament: Tournament, wanted: LogFilter) -> Callable[[LogEntry], bool]:
    army_clans = dict(Army.objects.filter(campaign=tournament.campaign).values_list("code", "clan"))
    army_of = {
        (p.name, p.clan): p.army.code if p.army else ""
        for p in tournament.players.select_related("army")
    }

    def matches(e: LogEntry) -> bool:
        if wanted.turn is not None and e.turn != wanted.turn:
            return False
        if wanted.kind and log_kind(e.action) != wanted.kind:
            return False
        if not (wanted.army or wanted.clan):
            return True
        named = _army_codes_in(e.data)
        actor = log_actor_player(e.actor)
        actor_clan = actor[1] if actor else ""
        actor_army = army_of.get(actor, "") if actor else ""
        if wanted.army:
            return wanted.army in named or actor_army == wanted.army
        clans = {army_clans[c] for c in named if c in army_clans}
        return (
            wanted.clan in clans
            or actor_clan == wanted.clan
            or (isinstance(e.data, dict) and e.data.get("clan") == wanted.clan)
        )

    return matches


def tournament_log(
    *,
    tournament: Tournament,
    after: int = 0,
    limit: int = 1000,
    wanted: LogFilter | None = None,
) -> list[dict[str, Any]]:
    """The log from entry ``after`` on, oldest first (for judges, and for export).

    With ``wanted``, only the entries it asks for (the console's filters): the next
    ``limit`` of them, however many others lie between.
    """
    entries = LogEntry.objects.filter(tournament=tournament, pk__gt=after).order_by("pk")
    if not wanted:
        return [_log_row(e) for e in entries[:limit]]
    if wanted.turn is not None:
        entries = entries.filter(turn=wanted.turn)
    matches = _log_matcher(tournament, wanted)
    found: list[dict[str, Any]] = []
    for e in entries.iterator(chunk_size=500):
        if matches(e):
            found.append(_log_row(e))
            if len(found) >= limit:
                break
    return found


def turn_case(*, tournament: Tournament, number: int) -> dict[str, Any] | None:
    """A played turn as a case file (case-format.md) that reproduces its result.

    The ``expect`` holds what was stored, so ``manage.py adjudicate --check`` confirms it.
    """
    turn = (
        Turn.objects.filter(
            campaign=tournament.campaign, number=number, status=Turn.Status.RESOLVED
        )
        .only("case", "result")
        .first()
    )
    if turn is None or turn.case is None or turn.result is None:
        return None
    expect = {
        key: turn.result[key]
        for key in ("armies", "orders", "meetings", "reinforcements", "control", "scores")
    }
    # Draws made at random are given in the file, so a replay reports them as given.
    expect["draws"] = [
        {"provinces": d["provinces"], "moving_from": d["moving_from"]} for d in turn.result["draws"]
    ]
    return {
        **turn.case,
        "description": f"{tournament.name}: turn {number} as played",
        "expect": expect,
    }


def deadline_flags(*, tournament: Tournament) -> list[dict[str, Any]]:
    """The missed deadlines no judge has ruled on yet (``turn_deadline_missed`` without a
    ``turn_deadline_ruled``), each with its sentence in the reader's language."""
    ruled = {
        flag
        for flag in LogEntry.objects.filter(
            tournament=tournament, action="turn_deadline_ruled"
        ).values_list("data__flag", flat=True)
    }
    entries = [
        entry
        for entry in LogEntry.objects.filter(
            tournament=tournament, action="turn_deadline_missed"
        ).order_by("at", "pk")
        if entry.pk not in ruled
    ]
    if not entries:
        return []
    context = log_context(tournament)
    flags = []
    for entry in entries:
        data = dict(entry.data)
        try:
            deadline = datetime.fromisoformat(str(data.get("deadline")))
        except ValueError:
            deadline = None
        if deadline is not None:
            # Read now, not when the turn was resolved: a late refusal written just after
            # the resolution belongs here too.
            data["orders"] = orders_around_deadline(
                tournament=tournament, deadline=deadline, resolved_at=entry.at
            )
        row = {"action": entry.action, "data": data, "by": entry.actor, "turn": entry.turn}
        flags.append(
            {
                "id": entry.pk,
                "turn": entry.turn,
                "at": entry.at.isoformat(),
                "text": log_text(row, context),
            }
        )
    return flags
