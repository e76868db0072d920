"""The tables' lifecycle with the turns and the game (R7, R8): after each turn's resolution the
sync opens, reseats and disperses tables and seats reinforcements (``battles_sync``); undoing
a turn puts them back (``battles_undo``); the game's end stops them and its reopening resumes
them (``battles_stop``, ``battles_resume``). Called by ``referees.services`` under its lock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q
from django.utils.translation import gettext as _

from battles.board import battle_setup, campaign_armies, campaign_control
from battles.draws import BattleDraws
from battles.models import (
    FIGHTING_STATUSES,
    GATHERING_STATUSES,
    OPEN_STATUSES,
    Battle,
    BattleSeat,
    TableSnapshot,
)
from battles.services._table import (
    as_stored,
    battle_save,
    participant_rows,
    table_entrants,
    table_game,
    table_log,
    table_log_line,
    table_new,
    table_seats,
    table_state,
)
from referees.kernel.core import CLOCK, Actor, announce, refusal
from referees.kernel.prepared_sql import rows_insert
from referees.models import LogEntry, Tournament
from sl5r.rules.games import GameError
from strategic_map.models import Army, Campaign
from strategic_map.selectors import campaign_game_map

Status = Battle.Status


# --- Opening tables after a turn (R7, R8) ----------------------------------------------------


@dataclass
class _SyncWrites:
    """What a turn's sync changes at the tables, written together as it ends: one statement
    per kind of write, however many tables and armies the turn moves.

    Written one table at a time, the sync made three or four queries per table opened,
    changed or dispersed, half of a busy turn's resolution on PostgreSQL
    (benchmarks/resolve_turn.py ``--tournament``).
    """

    tournament: Tournament
    turn: int
    now: datetime
    before: dict[int, dict[str, Any]] = field(default_factory=dict)  # as before the turn
    changed: dict[tuple[str, ...], dict[int, Battle]] = field(default_factory=dict)
    seats_gone: list[int] = field(default_factory=list)
    seats_new: list[BattleSeat] = field(default_factory=list)
    lines: list[LogEntry] = field(default_factory=list)

    def touch(self, battle: Battle, *fields: str) -> None:
        """``battle`` is about to change its ``fields``: kept as it was first, for undo."""
        self.before.setdefault(battle.pk, _table_snapshot(battle))
        battle.updated_at = self.now
        # Grouped by the columns written: a table is saved with its own changes only, as
        # ``battle_save`` would (a JSON column written by ``bulk_update`` would turn NULL to null).
        self.changed.setdefault((*fields, "updated_at"), {})[battle.pk] = battle

    def line(self, battle: Battle, action: str, **data: Any) -> None:
        self.lines.append(
            table_log_line(
                self.tournament,
                battle,
                actor=CLOCK,
                action=action,
                now=self.now,
                turn=self.turn,
                **data,
            )
        )

    def write(self) -> None:
        if self.seats_gone:
            BattleSeat.objects.filter(pk__in=self.seats_gone).delete()
        rows_insert(self.seats_new)
        for fields, tables in self.changed.items():
            Battle.objects.bulk_update(list(tables.values()), list(fields))
        rows_insert(self.lines)


def battles_sync(
    *, tournament: Tournament, turn_number: int, result: Mapping[str, Any], now: datetime
) -> None:
    """After turn ``turn_number`` was resolved: meetings, dispersals and reinforcements.

    Called by ``referees.services`` inside the resolving transaction, with the tournament
    locked and its campaign fresh. Every meeting the engine reports opens a table in
    ``meeting`` (or seats its newcomers at the open one there, which goes back to
    ``meeting``); tables still gathering where no meeting is left disperse; armies that
    entered a province with a battle going on join it (R8) and the game is told.

    Its queries do not grow with the tables or the armies: the open tables and their seats
    are read in two, the newcomers' army rows in one (none when no table changes), and the
    changes are written together (``_SyncWrites``).
    """
    tables = _open_tables(tournament)
    seated = {b.pk: {seat.army.code: seat for seat in b.seats.all()} for b in tables}
    gathering = {b.province: b for b in tables if b.status in GATHERING_STATUSES}
    fighting = {b.province: b for b in tables if b.status in FIGHTING_STATUSES}
    meetings: list[Mapping[str, Any]] = list(result.get("meetings") or [])
    reinforcements: list[Mapping[str, Any]] = list(result.get("reinforcements") or [])
    armies = _sync_armies(
        tournament.campaign,
        seated,
        gathering=gathering,
        fighting=fighting,
        meetings=meetings,
        reinforcements=reinforcements,
    )
    opened = _tables_open(
        tournament,
        meetings,
        armies,
        busy=gathering.keys() | fighting.keys(),
        turn=turn_number,
        now=now,
    )
    writes = _SyncWrites(tournament=tournament, turn=turn_number, now=now)
    _meetings_seat(
        writes, meetings, armies, seated, gathering=gathering, fighting=fighting, opened=opened
    )
    for battle in gathering.values():
        writes.touch(battle, "status", "ended_at")
        battle.status = Status.DISPERSED
        battle.ended_at = now
        writes.line(battle, "battle_dispersed")
    for reinforcement in reinforcements:
        fought = fighting.get(reinforcement["province"])
        _reinforce(
            writes,
            battle=fought,
            seats=seated[fought.pk] if fought is not None else {},
            newcomers={c: armies[c] for c in reinforcement["armies"] if c in armies},
        )
    # Every change at a table writes its line: none, nothing to keep or to announce.
    if not writes.lines:
        return
    writes.write()
    _snapshot_keep(writes, tables, opened)
    announce(tournament, "battle", turn=turn_number)


def _present_at(meeting: Mapping[str, Any], armies: Mapping[str, Army]) -> dict[str, Army]:
    """The armies of ``meeting`` whose rows the sync has, in the order of their codes."""
    return {code: armies[code] for code in sorted(meeting["armies"]) if code in armies}


def _tables_open(
    tournament: Tournament,
    meetings: Sequence[Mapping[str, Any]],
    armies: Mapping[str, Army],
    *,
    busy: Collection[str],
    turn: int,
    now: datetime,
) -> dict[str, Battle]:
    """A table opens where armies meet and none is open (``busy``: the provinces with one);
    all of them in one statement, so that their seats and log lines, in the meetings' order,
    can name them. By province."""
    opened = {
        m["province"]: table_new(
            tournament, province=m["province"], armies=_present_at(m, armies), turn=turn, now=now
        )
        for m in meetings
        if m["province"] not in busy
    }
    rows_insert(list(opened.values()))
    return opened


def _meetings_seat(
    writes: _SyncWrites,
    meetings: Sequence[Mapping[str, Any]],
    armies: Mapping[str, Army],
    seated: Mapping[int, Mapping[str, BattleSeat]],
    *,
    gathering: dict[str, Battle],
    fighting: Mapping[str, Battle],
    opened: Mapping[str, Battle],
) -> None:
    """Each meeting seats its armies: at the table it opened, or at the one gathering there,
    whose newcomers and leavers change it. A gathering table a meeting finds is taken out of
    ``gathering``: the tables left there have no meeting any more, and disperse."""
    for meeting in meetings:
        province = meeting["province"]
        present = _present_at(meeting, armies)
        battle = gathering.pop(province, None)
        if province in fighting:
            continue  # a battle is being fought there: newcomers join it as reinforcements
        if battle is None:
            battle = opened[province]
            writes.seats_new += table_seats(
                battle, armies=present, turn=writes.turn, now=writes.now
            )
            writes.line(battle, "battle_opened", armies=sorted(present))
            continue
        _table_reseat(writes, battle, seated[battle.pk], present)


def _table_reseat(
    writes: _SyncWrites,
    battle: Battle,
    seats: Mapping[str, BattleSeat],
    present: Mapping[str, Army],
) -> None:
    """A gathering table follows its meeting: newcomers make it a ``meeting`` again; when
    only leavers change it, the ones who stay may all have said peace."""
    joined = sorted(set(present) - set(seats))
    left = sorted(set(seats) - set(present))
    if not joined and not left:
        return
    writes.touch(battle, "status")
    writes.seats_gone += [seats[code].pk for code in left]
    writes.seats_new += [
        BattleSeat(battle=battle, army=present[c], joined_turn=writes.turn) for c in joined
    ]
    votes = [s.vote for code, s in seats.items() if code not in left]
    if joined:
        battle.status = Status.MEETING
    elif votes and all(v == "peace" for v in votes):
        battle.status = Status.PEACE
    writes.line(battle, "battle_seats_changed", joined=joined, left=left, status=battle.status)


def _snapshot_keep(
    writes: _SyncWrites, tables: Sequence[Battle], opened: Mapping[str, Battle]
) -> None:
    """What this resolution changed is kept as it was before, so that undoing the turn can put
    the tables back with the board (battles_undo): every open table whose last change is
    now, in the tables' order, as the query for them kept it (a table some other change
    saved at this very instant, before the sync, is kept as it is)."""
    TableSnapshot.objects.create(
        tournament=writes.tournament,
        turn=writes.turn,
        taken_at=writes.now,
        tables={
            str(b.pk): writes.before[b.pk] if b.pk in writes.before else _table_snapshot(b)
            for b in tables
            if b.updated_at == writes.now
        },
        opened=[b.pk for b in opened.values()],
    )


def _sync_armies(
    campaign: Campaign,
    seated: Mapping[int, Mapping[str, BattleSeat]],
    *,
    gathering: Mapping[str, Battle],
    fighting: Mapping[str, Battle],
    meetings: Sequence[Mapping[str, Any]],
    reinforcements: Sequence[Mapping[str, Any]],
) -> dict[str, Army]:
    """The army rows the turn's tables need, by code: the seated ones come with their seats,
    the others are read in one query, and only when a table opens or gains armies."""
    known = {code: seat.army for seats in seated.values() for code, seat in seats.items()}
    wanted: set[str] = set()
    for meeting in meetings:
        province = meeting["province"]
        codes = set(meeting["armies"])
        table = gathering.get(province)
        if province in fighting or (table is not None and codes == set(seated[table.pk])):
            continue
        wanted |= codes - known.keys()
    for reinforcement in reinforcements:
        if reinforcement["province"] in fighting:
            wanted |= set(reinforcement["armies"]) - known.keys()
    if not wanted:
        return known
    return {**known, **campaign_armies(campaign, wanted)}


def _open_tables(tournament: Tournament) -> list[Battle]:
    """The tables still open, with their seats (two queries however many there are), in the
    model's order. The order is spelled out: ``Meta.ordering`` starts with the tournament,
    which joins the tournament (and, for the seats, the tables too) only to sort by it."""
    return list(
        Battle.objects.filter(tournament=tournament, status__in=OPEN_STATUSES)
        .order_by("-opened_at", "-id")
        .prefetch_related(
            Prefetch("seats", queryset=BattleSeat.objects.select_related("army").order_by("id"))
        )
    )


def _table_snapshot(battle: Battle) -> dict[str, Any]:
    return {
        "status": battle.status,
        "state": battle.state,
        "setup": battle.setup,
        "ended_at": battle.ended_at.isoformat() if battle.ended_at else None,
        "seats": [
            {
                "army": seat.army_id,
                "vote": seat.vote,
                "voted_at": seat.voted_at.isoformat() if seat.voted_at else None,
                "joined_turn": seat.joined_turn,
                "reinforcement": seat.reinforcement,
            }
            for seat in sorted(battle.seats.all(), key=lambda seat: seat.pk)
        ],
    }


# --- Undoing a turn --------------------------------------------------------------------------


def battles_undo_problem(
    *, tournament: Tournament, turn_number: int, resolved_at: datetime
) -> str | None:
    """Why the tables cannot go back to before turn ``turn_number``, or None when they can:
    the undo dialog says it before the judge confirms, and ``battles_undo`` refuses the same.
    """
    snapshot = TableSnapshot.objects.filter(tournament=tournament, turn=turn_number).first()
    affected = set(snapshot.opened) if snapshot else set()
    affected |= {int(pk) for pk in (snapshot.tables if snapshot else {})}
    later = Battle.objects.filter(tournament=tournament).filter(
        Q(started_at__gt=resolved_at)
        | Q(decided_at__gt=resolved_at)
        | Q(status=Status.ENDED, updated_at__gt=resolved_at)
        | Q(pk__in=affected, updated_at__gt=resolved_at)
    )
    busy = later.order_by("id").first()
    if busy is None:
        return None
    return _(
        "the table in %(province)s has changed since turn %(turn)s was resolved; "
        "correct it by hand, then undo"
    ) % {"province": _province_name(tournament, busy.province), "turn": turn_number}


def _province_name(tournament: Tournament, code: str) -> str:
    province = campaign_game_map(tournament.campaign).provinces.get(code)
    return province.name if province is not None else code


def battles_undo(*, tournament: Tournament, turn_number: int, resolved_at: datetime) -> None:
    """Put the tables back as they were before turn ``turn_number`` was resolved.

    Called by ``referees.services.clock_undo`` in its transaction, before the board goes
    back. Tables the turn opened are removed, and tables it changed (newcomers seated,
    meetings dispersed, reinforcements told to the game) get their earlier state.

    Refused when something has happened at a table since that a restored board would
    contradict: a battle started, decided, ended or corrected after the resolution, or a
    table the turn opened or changed has been voted or played at since. Such a table must
    be put right by hand (a correction) before the turn can be undone.
    """
    problem = battles_undo_problem(
        tournament=tournament, turn_number=turn_number, resolved_at=resolved_at
    )
    if problem is not None:
        raise refusal(problem, "tables_changed")
    snapshot = TableSnapshot.objects.filter(tournament=tournament, turn=turn_number).first()
    if snapshot is None:
        return
    Battle.objects.filter(pk__in=snapshot.opened).delete()
    for pk, before in snapshot.tables.items():
        battle = Battle.objects.get(pk=int(pk))
        battle.status = before["status"]
        battle.state = before["state"]
        battle.setup = before["setup"]
        battle.ended_at = datetime.fromisoformat(before["ended_at"]) if before["ended_at"] else None
        battle.updated_at = resolved_at
        battle.save(update_fields=["status", "state", "setup", "ended_at", "updated_at"])
        BattleSeat.objects.filter(battle=battle).delete()
        BattleSeat.objects.bulk_create(
            [
                BattleSeat(
                    battle=battle,
                    army_id=seat["army"],
                    vote=seat["vote"],
                    voted_at=datetime.fromisoformat(seat["voted_at"]) if seat["voted_at"] else None,
                    joined_turn=seat["joined_turn"],
                    reinforcement=seat["reinforcement"],
                )
                for seat in before["seats"]
            ]
        )
    snapshot.delete()


# --- Reinforcements (R8) ---------------------------------------------------------------------


def _reinforce(
    writes: _SyncWrites,
    *,
    battle: Battle | None,
    seats: Mapping[str, BattleSeat],
    newcomers: Mapping[str, Army],
) -> None:
    """R8: armies that entered a province with a battle going on join its game.

    ``battle`` is the table fighting there (None: none is), ``seats`` its seats as the turn
    found them; what changes goes with the sync's other writes.
    """
    if battle is None or not newcomers:
        return
    arriving = {code: army for code, army in newcomers.items() if code not in seats}
    if not arriving:
        return
    if battle.status == Status.DECIDED:
        writes.line(
            battle,
            "battle_reinforced",
            armies=sorted(arriving),
            seated=False,
            note="the game already has an outcome: they wait for the result",
        )
        return
    campaign = writes.tournament.campaign
    everyone = {**{code: s.army for code, s in seats.items()}, **arriving}
    control = (battle.setup or {}).get("control") or campaign_control(campaign)
    setup = battle_setup(campaign, province=battle.province, armies=everyone, control=control)
    game = table_game(battle)
    draws = BattleDraws(
        battle,
        state=battle.state,
        participants=everyone,
        move={"type": "reinforce", "armies": sorted(arriving)},
    )
    try:
        state = game.reinforce(
            table_state(battle),
            entrants=table_entrants(setup, arriving),
            rng=draws.rng,
            rng_label=draws.label,
        )
    except GameError as error:
        writes.line(
            battle, "battle_reinforcement_refused", armies=sorted(arriving), problem=str(error)
        )
        return
    writes.touch(battle, "state", "setup")
    writes.seats_new += [
        BattleSeat(battle=battle, army=army, joined_turn=writes.turn, reinforcement=True)
        for army in arriving.values()
    ]
    battle.state = as_stored(state)
    stored_setup = dict(battle.setup or {})
    stored_setup["participants"] = [
        *stored_setup.get("participants", []),
        *participant_rows(setup, arriving, reinforcement=True, joined_turn=writes.turn),
    ]
    battle.setup = stored_setup
    writes.line(
        battle, "battle_reinforced", armies=sorted(arriving), seated=True, draws=draws.record(state)
    )


# --- The end of the game (R8) ----------------------------------------------------------------


def battles_stop(*, tournament: Tournament, actor: Actor, now: datetime) -> None:
    """The game has ended: every table still open stops; the board stays as it is, so each
    province keeps its controller (R8). Called by ``referees.services`` as the game ends.
    """
    stopped = list(Battle.objects.filter(tournament=tournament, status__in=OPEN_STATUSES))
    for battle in stopped:
        was, changed = battle.status, battle.updated_at
        battle.status = Status.STOPPED
        battle.ended_at = now
        battle_save(battle, now, "status", "ended_at")
        # What battles_resume needs to put the table back as it was, should the judge
        # reopen the game.
        table_log(
            tournament,
            battle,
            actor=actor,
            action="battle_stopped",
            now=now,
            was=was,
            changed=changed.isoformat(),
        )
    if stopped:
        announce(tournament, "battle")


def battles_resume(
    *, tournament: Tournament, stopped_at: datetime, actor: Actor, now: datetime
) -> int:
    """A judge reopens a game he ended (``referees.services.game_reopen``): the tables its end
    stopped (at ``stopped_at``) go on as they were, as if it had not ended, so that the
    turn before can still be undone. Returns how many."""
    resumed = 0
    for entry in LogEntry.objects.filter(
        tournament=tournament, action="battle_stopped", at=stopped_at
    ).order_by("pk"):
        battle = Battle.objects.filter(
            tournament=tournament, pk=entry.data.get("battle"), status=Status.STOPPED
        ).first()
        was = entry.data.get("was")
        if battle is None or was not in OPEN_STATUSES:
            continue
        changed = entry.data.get("changed")
        battle.status = was
        battle.ended_at = None
        battle.updated_at = datetime.fromisoformat(changed) if changed else now
        battle.save(update_fields=["status", "ended_at", "updated_at"])
        table_log(tournament, battle, actor=actor, action="battle_resumed", now=now, was=was)
        resumed += 1
    if resumed:
        announce(tournament, "battle")
    return resumed
