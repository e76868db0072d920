"""Battle tables (R7, R8): meetings, votes, the game at the table, results on the map.

Every service here locks the tournament (``referees.kernel.core.tournament_lock``), so a table
changes under the same lock as the board and the clock, writes its line in the tournament's log
(R11) and announces itself after commit (kind ``battle``; the event says nothing more, and
what each viewer may see of a table is decided in ``battles.selectors``).

The table game itself is ``sl5r.rules.games``: pure, handed its state and an action, and a
random source from here. The map's side is ``battles.board``: who stands in the province,
who may not give orders (``in_battle``, R4), who is destroyed and when he may reform (R9),
who controls the province afterwards (R6); this module never reads the board itself.

Decisions (see also docs/api.md, "Battles"):

- A General votes, acts and chooses for his own army only; a judge may do any of it for a
  General (a judge's table action is ``by: "judge"`` unless he names a seated army).
- When a battle ends and armies of several clans are still in the province, a new table
  opens there at once: in ``peace`` when they all fought in the battle (they stopped, or the
  winner let them live), else as a ``meeting`` where the others have not voted yet. Any of
  them may call for battle later (R7).
- A win needs the winner's choice only when an army of another clan than the winner's is
  neither the winner nor a loser; the winner's own clan never fights him, so its armies
  survive.
- Newcomers to a table whose game already has an outcome are not seated: they wait for the
  result, and then meet whoever is left.
- At the end of the game every open table (meeting, peace, battle, decided) is ``stopped``;
  the board is left as it is, so the province keeps its controller (R8).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from battles.board import (
    battle_setup,
    board_battle_enter,
    board_battle_result,
    board_casualties_restore,
    campaign_armies,
    campaign_control,
    campaign_turn_number,
    province_armies,
    province_controller,
)
from battles.draws import BattleDraws
from battles.models import (
    FIGHTING_STATUSES,
    GATHERING_STATUSES,
    OPEN_STATUSES,
    Battle,
    BattleProposal,
    BattleSeat,
    TableSnapshot,
)
from referees.kernel.core import (
    CLOCK,
    Actor,
    announce,
    log_line,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.prepared_sql import rows_insert
from referees.models import LogEntry, Player, Tournament
from sl5r.rules.battle import BattleSetup
from sl5r.rules.games import (
    BattleGame,
    Casualty,
    Entrant,
    GameError,
    TableOutcome,
    game_for,
)
from strategic_map.models import Army, Campaign
from strategic_map.selectors import campaign_game_map

Status = Battle.Status
VOTES = ("peace", "battle")
OUTCOME_KINDS = ("win", "truce")

ERROR_NOT_RUNNING = gettext_noop("battles are fought while the turns run")
ERROR_GAME_OVER = gettext_noop("the game has ended: its battles have stopped (R8)")
ERROR_NOT_SEATED = gettext_noop("your army is not at this table")
# R8, R13: the counts a player keeps for himself; another's are changed only with his consent.
COUNTED_ACTIONS = frozenset({"honor", "province", "ring", "models", "victory_points"})
ANSWERS = ("confirm", "decline", "withdraw")
DISHONOR = -20  # R13: at or below at the end of his own turn, a player loses


# --- Who is asking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Who:
    actor: Actor
    judge: bool
    army: str | None  # the General's own army


def _who(actor: Actor | Player, tournament: Tournament) -> _Who:
    """A judge (``Actor`` with ``judge``), or a player: a General acts for his army only."""
    if isinstance(actor, Player):
        if actor.tournament_id != tournament.pk:
            raise refusal(_("only a player of this tournament may do this"), "forbidden")
        # The army comes with the player wherever he is read (token, session).
        army = actor.army if actor.role == Player.Role.GENERAL else None
        return _Who(actor=Actor.of_player(actor), judge=False, army=army.code if army else None)
    return _Who(actor=actor, judge=actor.judge, army=None)


def _playing(tournament: Tournament) -> None:
    if tournament.phase == Tournament.Phase.FINISHED:
        raise refusal(_(ERROR_GAME_OVER), "phase")
    if tournament.phase != Tournament.Phase.RUNNING:
        raise refusal(_(ERROR_NOT_RUNNING), "phase")


def _battle_locked(battle_id: int) -> tuple[Tournament, Battle]:
    """The battle and its tournament, the tournament (and its campaign) locked."""
    tournament_id = Battle.objects.filter(pk=battle_id).values_list("tournament_id", flat=True)
    found = tournament_id.first()
    if found is None:
        raise refusal(_("there is no battle %(id)s") % {"id": battle_id}, "not_found")
    tournament = tournament_lock(found)
    battle = Battle.objects.get(pk=battle_id)
    battle.tournament = tournament
    return tournament, battle


def _json(value: Any) -> Any:
    """What the database gives back: tuples become lists, keys strings."""
    return json.loads(json.dumps(value))


# --- The game's data -------------------------------------------------------------------------


def _game(battle: Battle) -> BattleGame:
    try:
        return game_for(battle.game)
    except GameError as error:
        raise refusal(str(error), "game") from error


def _options(tournament: Tournament, game: str) -> dict[str, Any]:
    if game == Battle.Game.BUSHIDO:
        return {"turns": tournament.bushido_turns}  # R14: the scenario sets the turns
    return {}


def _entrants(setup: BattleSetup, codes: Collection[str]) -> list[Entrant]:
    return [
        Entrant(
            army=p.army,
            clan=p.clan,
            honor_bonus=p.honor_bonus,
            hand_size=p.hand_size,
            force_modifier=p.force_modifier,
            small_farms=p.small_farms,
            chooses_seating=p.army in setup.seating_chosen_by,
        )
        for p in setup.participants
        if p.army in codes
    ]


def _participant_rows(
    setup: BattleSetup, codes: Collection[str], **extra: Any
) -> list[dict[str, Any]]:
    return [
        {**asdict(p), "notes": list(p.notes), **extra}
        for p in setup.participants
        if p.army in codes
    ]


def _outcome_json(outcome: TableOutcome) -> dict[str, Any]:
    return {
        "kind": outcome.kind,
        "winner": outcome.winner,
        "losers": list(outcome.losers),
        "reason": outcome.reason,
    }


def _outcome_of(data: Mapping[str, Any]) -> TableOutcome:
    return TableOutcome(
        kind=data["kind"],
        winner=data.get("winner"),
        losers=tuple(data.get("losers") or ()),
        reason=data.get("reason", ""),
    )


def _casualty_json(casualty: Casualty) -> dict[str, Any]:
    return {
        "army": casualty.army,
        "destroyed_by": casualty.destroyed_by,
        "reform_from": casualty.reform_from,
    }


def _seats(battle: Battle) -> dict[str, BattleSeat]:
    seats = BattleSeat.objects.filter(battle=battle).select_related("army").order_by("id")
    return {s.army.code: s for s in seats}


def _save(battle: Battle, now: datetime, *fields: str) -> None:
    battle.updated_at = now
    battle.save(update_fields=[*fields, "updated_at"])


def _table_log(
    tournament: Tournament,
    battle: Battle,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    draws: Mapping[str, Any] | None = None,
    **data: Any,
) -> None:
    _table_log_line(
        tournament,
        battle,
        actor=actor,
        action=action,
        now=now,
        turn=turn,
        reason=reason,
        draws=draws,
        **data,
    ).save()


def _table_log_line(
    tournament: Tournament,
    battle: Battle,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    draws: Mapping[str, Any] | None = None,
    **data: Any,
) -> LogEntry:
    """A table's log line, not yet saved: ``_table_log`` saves one, a turn's sync all of its
    own together."""
    if draws is not None:
        data["draws"] = draws  # R11: what a player needs to recompute this step's draws
    return log_line(
        tournament,
        actor=actor,
        action=action,
        now=now,
        turn=turn,
        reason=reason,
        battle=battle.pk,
        province=battle.province,
        **data,
    )


# --- Opening tables after a turn (R7, R8) ----------------------------------------------------


def _table_new(
    tournament: Tournament,
    *,
    province: str,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> Battle:
    """A table about to open, not yet saved: at ``peace`` when every army said peace."""
    votes = votes or {}
    everyone_peace = bool(armies) and all(votes.get(code) == "peace" for code in armies)
    return Battle(
        tournament=tournament,
        province=province,
        opened_turn=turn,
        status=Status.PEACE if everyone_peace else Status.MEETING,
        game=tournament.battle_game,
        opened_at=now,
        updated_at=now,
    )


def _table_seats(
    battle: Battle,
    *,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> list[BattleSeat]:
    """The seats of a table that opens (``battle`` saved), not yet saved."""
    votes = votes or {}
    return [
        BattleSeat(
            battle=battle,
            army=army,
            vote=votes.get(code, ""),
            voted_at=now if votes.get(code) else None,
            joined_turn=turn,
        )
        for code, army in armies.items()
    ]


def _open_table(
    tournament: Tournament,
    *,
    province: str,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> Battle:
    battle = _table_new(
        tournament, province=province, armies=armies, turn=turn, now=now, votes=votes
    )
    battle.save(force_insert=True)
    BattleSeat.objects.bulk_create(
        _table_seats(battle, armies=armies, turn=turn, now=now, votes=votes)
    )
    return battle


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
        # ``_save`` would (a JSON column written by ``bulk_update`` would turn NULL to null).
        self.changed.setdefault((*fields, "updated_at"), {})[battle.pk] = battle

    def line(self, battle: Battle, action: str, **data: Any) -> None:
        self.lines.append(
            _table_log_line(
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

    def present_at(meeting: Mapping[str, Any]) -> dict[str, Army]:
        return {code: armies[code] for code in sorted(meeting["armies"]) if code in armies}

    # A table opens where armies meet and none is open; all of them in one statement, so that
    # their seats and log lines, in the meetings' order, can name them.
    opened = {
        m["province"]: _table_new(
            tournament, province=m["province"], armies=present_at(m), turn=turn_number, now=now
        )
        for m in meetings
        if m["province"] not in gathering and m["province"] not in fighting
    }
    rows_insert(list(opened.values()))
    writes = _SyncWrites(tournament=tournament, turn=turn_number, now=now)

    for meeting in meetings:
        province = meeting["province"]
        present = present_at(meeting)
        battle = gathering.pop(province, None)
        if province in fighting:
            continue  # a battle is being fought there: newcomers join it as reinforcements
        if battle is None:
            battle = opened[province]
            writes.seats_new += _table_seats(battle, armies=present, turn=turn_number, now=now)
            writes.line(battle, "battle_opened", armies=sorted(present))
            continue
        seats = seated[battle.pk]
        joined = sorted(set(present) - set(seats))
        left = sorted(set(seats) - set(present))
        if not joined and not left:
            continue
        writes.touch(battle, "status")
        writes.seats_gone += [seats[code].pk for code in left]
        writes.seats_new += [
            BattleSeat(battle=battle, army=present[c], joined_turn=turn_number) for c in joined
        ]
        votes = [s.vote for code, s in seats.items() if code not in left]
        if joined:
            battle.status = Status.MEETING
        elif votes and all(v == "peace" for v in votes):
            battle.status = Status.PEACE
        writes.line(battle, "battle_seats_changed", joined=joined, left=left, status=battle.status)

    for battle in gathering.values():
        writes.touch(battle, "status", "ended_at")
        battle.status = Status.DISPERSED
        battle.ended_at = now
        writes.line(battle, "battle_dispersed")

    for reinforcement in reinforcements:
        battle = fighting.get(reinforcement["province"])
        _reinforce(
            writes,
            battle=battle,
            seats=seated[battle.pk] if battle is not None else {},
            newcomers={c: armies[c] for c in reinforcement["armies"] if c in armies},
        )

    # Every change at a table writes its line: none, nothing to keep or to announce.
    if not writes.lines:
        return
    writes.write()
    # What this resolution changed is kept as it was before, so that undoing the turn can put
    # the tables back with the board (battles_undo): every open table whose last change is
    # now, in the tables' order, as the query for them kept it (a table some other change
    # saved at this very instant, before the sync, is kept as it is).
    TableSnapshot.objects.create(
        tournament=tournament,
        turn=turn_number,
        taken_at=now,
        tables={
            str(b.pk): writes.before[b.pk] if b.pk in writes.before else _table_snapshot(b)
            for b in tables
            if b.updated_at == now
        },
        opened=[b.pk for b in opened.values()],
    )
    announce(tournament, "battle", turn=turn_number)


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
    game = _game(battle)
    draws = BattleDraws(
        battle,
        state=battle.state,
        participants=everyone,
        move={"type": "reinforce", "armies": sorted(arriving)},
    )
    try:
        state = game.reinforce(
            _table_state(battle),
            entrants=_entrants(setup, arriving),
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
    battle.state = _json(state)
    stored_setup = dict(battle.setup or {})
    stored_setup["participants"] = [
        *stored_setup.get("participants", []),
        *_participant_rows(setup, arriving, reinforcement=True, joined_turn=writes.turn),
    ]
    battle.setup = stored_setup
    writes.line(
        battle, "battle_reinforced", armies=sorted(arriving), seated=True, draws=draws.record(state)
    )


# --- The meeting: peace or battle (R7) -------------------------------------------------------


@unit_of_work()
def meeting_vote(
    *, battle_id: int, army_code: str | None, vote: str, actor: Actor | Player, now: datetime
) -> Battle:
    """A General says peace or battle for his own army (a judge may record it for him).

    All peace: the table is at ``peace``. Any battle: the battle starts at once, from a
    meeting or from peace (R7: a General in a peaceful meeting may call for battle later).
    """
    tournament, battle = _battle_locked(battle_id)
    who = _who(actor, tournament)
    if vote not in VOTES:
        raise refusal(_('vote: "peace" or "battle"'), "validation")
    if who.judge:
        if not army_code:
            raise refusal(_("army: name the army whose General's word is recorded"), "validation")
    elif who.army is None:
        raise refusal(_("only a General votes at a meeting, for his own army"), "forbidden")
    elif army_code and army_code != who.army:
        raise refusal(_("a General votes for his own army only"), "forbidden")
    else:
        army_code = who.army
    _playing(tournament)
    seats = _seats(battle)
    seat = seats.get(army_code or "")
    if seat is None:
        if who.judge:
            raise refusal(
                _('army: "%(army)s" is not at this table') % {"army": army_code}, "validation"
            )
        raise refusal(_(ERROR_NOT_SEATED), "forbidden")
    if battle.status not in GATHERING_STATUSES:
        raise refusal(
            _("the meeting is over: this table is %(status)s (votes are for meetings)")
            % {"status": battle.status},
            "status",
        )
    if seat.vote == vote:
        # The same word again (a phone's retry, a second tap) changes nothing: the record
        # keeps the first one and nobody is told of a change (R11).
        return battle
    seat.vote = vote
    seat.voted_at = now
    seat.save(update_fields=["vote", "voted_at"])
    turn = campaign_turn_number(tournament.campaign)
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_vote",
        now=now,
        turn=turn,
        army=army_code,
        vote=vote,
    )
    if vote == "battle":
        _start(tournament, battle, who=who, called_by=army_code or "", turn=turn, now=now)
    elif all(s.vote == "peace" for s in seats.values()) and battle.status != Status.PEACE:
        battle.status = Status.PEACE
        _save(battle, now, "status")
        _table_log(tournament, battle, actor=who.actor, action="battle_peace", now=now, turn=turn)
    announce(tournament, "battle")
    return battle


def _start(
    tournament: Tournament, battle: Battle, *, who: _Who, called_by: str, turn: int, now: datetime
) -> None:
    """The battle starts with every army in the province (R7): set-up, ``in_battle``, game."""
    campaign = tournament.campaign
    present = province_armies(campaign, battle.province)
    seats = _seats(battle)
    gone = sorted(set(seats) - set(present))
    arrived = sorted(set(present) - set(seats))
    if len({a.clan for a in present.values()}) < 2:
        raise refusal(
            _("the armies here are all of one clan now: there is nobody to fight (R7)"),
            "no_enemy",
        )
    control = campaign_control(campaign)
    setup = battle_setup(campaign, province=battle.province, armies=present, control=control)
    game = _game(battle)
    draws = BattleDraws(battle, state=None, participants=present, move={"type": "start"})
    try:
        state = game.open(
            entrants=_entrants(setup, present),
            options=_options(tournament, battle.game),
            rng=draws.rng,
            rng_label=draws.label,
        )
    except GameError as error:
        raise refusal(
            _("the battle cannot start: %(problem)s") % {"problem": error}, "game"
        ) from error
    # The table follows the board: an army moved by a judge since the meeting opened.
    BattleSeat.objects.filter(battle=battle, army__code__in=gone).delete()
    BattleSeat.objects.bulk_create(
        [BattleSeat(battle=battle, army=present[c], joined_turn=turn) for c in arrived]
    )
    board_battle_enter(campaign=campaign, codes=present)  # R4: their Generals give no orders
    battle.status = Status.BATTLE
    battle.started_at = now
    battle.state = _json(state)
    battle.setup = {
        "province": battle.province,
        "control": control,
        "participants": _participant_rows(setup, present, reinforcement=False, joined_turn=turn),
        "seating_chosen_by": list(setup.seating_chosen_by),
    }
    _save(battle, now, "status", "started_at", "state", "setup")
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_started",
        now=now,
        turn=turn,
        called_by=called_by,
        armies=sorted(present),
        game=battle.game,
        setup=battle.setup["participants"],
        draws=draws.record(state),
    )


# --- Playing the table -----------------------------------------------------------------------


@unit_of_work()
def battle_act(
    *, battle_id: int, action: Mapping[str, Any], actor: Actor | Player, now: datetime
) -> Battle:
    """One action at the table: a General acts as his own army, a judge as ``judge``.

    An action the game does not allow now is refused (422) with the game's reason. When the
    game has an outcome, a truce or a win with nobody left to spare ends the battle at once;
    otherwise the table waits for the winner's choice (``decided``), during which only a
    judge acts (to change the result, e.g. ``judge_result``).
    """
    tournament, battle = _battle_locked(battle_id)
    who = _who(actor, tournament)
    if not who.judge and who.army is None:
        raise refusal(_("only a General (or a judge) acts at a battle table"), "forbidden")
    _playing(tournament)
    seats = _seats(battle)
    if not who.judge and who.army not in seats:
        raise refusal(_(ERROR_NOT_SEATED), "forbidden")
    if battle.status == Status.DECIDED and not who.judge:
        # A judge may still change the game's result (the game allows it); nobody else acts.
        raise refusal(_("the game is over: the winner chooses which armies survive"), "decided")
    if battle.status not in FIGHTING_STATUSES:
        raise refusal(
            _("no battle is being played at this table (%(status)s)") % {"status": battle.status},
            "status",
        )
    kind = action.get("type") if isinstance(action, Mapping) else None
    if not isinstance(kind, str) or not kind.strip():
        raise refusal(_("type: name the action"), "validation")
    move = dict(action)
    if who.judge:
        by = move.get("by") or "judge"
        if by != "judge" and by not in seats:
            raise refusal(
                _('by: "%(by)s" is not at this table ("judge" or a seated army)') % {"by": by},
                "validation",
            )
        move["by"] = by
    else:
        move["by"] = who.army  # a General always acts as his own army
    confirmed = move.pop("confirm", False) is True
    game = _game(battle)
    state, outcome, draws = _played(game, battle, move, seats)
    turn = campaign_turn_number(tournament.campaign)
    subject = move.get("army")
    if not who.judge and kind in COUNTED_ACTIONS and _someone_elses(battle, seats, who, subject):
        # R8, R13: another player's count changes only when he (or a judge) agrees.
        _propose(tournament, battle, who=who, to=str(subject), move=move, turn=turn, now=now)
        announce(tournament, "battle")
        return battle
    if not who.judge and not confirmed and _ends_a_game(battle.state, state, outcome):
        raise refusal(
            _(
                "this ends the game at this table (R8): send it again with confirm: true if "
                "that is what happened"
            ),
            "confirm",
        )
    _played_store(
        tournament,
        battle,
        state,
        outcome,
        seats=seats,
        who=who,
        move=move,
        turn=turn,
        now=now,
        draws=draws,
    )
    announce(tournament, "battle")
    return battle


def _table_state(battle: Battle) -> Mapping[str, Any]:
    """The game on ``battle``'s table; a ``GameError`` (refused, not a crash) before the
    table is laid out, when there is none to play on."""
    state: Mapping[str, Any] | None = battle.state
    if state is None:
        raise GameError("table", "not laid out yet")
    return state


def _played(
    game: BattleGame, battle: Battle, move: Mapping[str, Any], seats: Mapping[str, BattleSeat]
) -> tuple[Any, TableOutcome | None, dict[str, Any] | None]:
    """The table after ``move``, its outcome, and the log's record of its draws (R11)."""
    draws = BattleDraws(battle, state=battle.state, participants=seats, move=move)
    try:
        state = game.act(_table_state(battle), move, rng=draws.rng, rng_label=draws.label)
        outcome = game.outcome(state)
    except GameError as error:
        raise refusal(str(error), "illegal_action") from error
    return state, outcome, draws.record(state)


def _played_store(
    tournament: Tournament,
    battle: Battle,
    state: Any,
    outcome: TableOutcome | None,
    *,
    seats: Mapping[str, BattleSeat],
    who: _Who,
    move: Mapping[str, Any],
    turn: int,
    now: datetime,
    draws: dict[str, Any] | None,
    proposal: BattleProposal | None = None,
) -> None:
    battle.state = _json(state)
    _save(battle, now, "state")
    # A confirmed proposal is one change: one line naming who proposed it and who confirmed
    # it (the confirmer is the entry's actor), never a second line crediting the confirmer.
    proposed: dict[str, Any] = (
        {"proposal": proposal.pk, "by_army": proposal.by, "to_army": proposal.to}
        if proposal is not None
        else {}
    )
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_proposal_confirmed" if proposal is not None else "battle_action",
        now=now,
        turn=turn,
        move=move,
        draws=draws,
        **proposed,
    )
    if outcome is not None:
        _decided(tournament, battle, outcome, seats=seats, who=who, turn=turn, now=now)


def _someone_elses(
    battle: Battle, seats: Mapping[str, BattleSeat], who: _Who, subject: Any
) -> bool:
    """Whether ``subject``'s counts belong to another player than the General acting."""
    if not isinstance(subject, str) or subject not in seats or subject == who.army:
        return False
    if battle.game == Battle.Game.BUSHIDO and who.army is not None and who.army in seats:
        # R14: a side is a clan's warband; its Generals keep its models and points together.
        return seats[subject].army.clan != seats[who.army].army.clan
    return True


def _honor_of(state: Any, army: str) -> int | None:
    for player in state.get("players", []) if isinstance(state, Mapping) else []:
        if player.get("army") == army and isinstance(player.get("honor"), int):
            return int(player["honor"])
    return None


def _ends_a_game(before: Any, after: Any, outcome: TableOutcome | None) -> bool:
    """Whether an action ends the game for someone (R8, R13): a new loser, an outcome, or a
    family honor brought down to −20 (he loses at the end of his turn unless it rises). A
    truce everyone agreed to ends nobody's game."""
    if outcome is not None and outcome.kind == "win":
        return True
    if set(after.get("losers", [])) - set(before.get("losers", [])):
        return True
    for player in after.get("players", []):
        army = player.get("army")
        was, now_ = _honor_of(before, army), _honor_of(after, army)
        if was is not None and now_ is not None and now_ <= DISHONOR < was:
            return True
    return False


# --- Consent: a change to another player's counts (R8, R13) ----------------------------------


def _propose(
    tournament: Tournament,
    battle: Battle,
    *,
    who: _Who,
    to: str,
    move: Mapping[str, Any],
    turn: int,
    now: datetime,
) -> BattleProposal:
    open_ = BattleProposal.objects.filter(
        battle=battle, by=who.army or "", to=to, status=BattleProposal.Status.OPEN
    )
    for existing in open_:
        if existing.action == dict(move):
            return existing  # a second tap, a phone's retry: the proposal stands once
    proposal = BattleProposal.objects.create(
        battle=battle, by=who.army or "", to=to, action=_json(dict(move)), made_at=now
    )
    _save(battle, now)
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_proposal_made",
        now=now,
        turn=turn,
        proposal=proposal.pk,
        by_army=proposal.by,
        to_army=to,
        move=proposal.action,
    )
    return proposal


def _proposals_lapse(battle: Battle, now: datetime) -> None:
    """A decided battle takes no more changes: what still waits for consent lapses."""
    BattleProposal.objects.filter(battle=battle, status=BattleProposal.Status.OPEN).update(
        status=BattleProposal.Status.LAPSED, answered_at=now
    )


@unit_of_work()
def battle_proposal_answer(
    *, battle_id: int, proposal_id: int, answer: str, actor: Actor | Player, now: datetime
) -> Battle:
    """The other player (or a judge) confirms or declines a proposal; its proposer (or a
    judge) withdraws it. A confirmed proposal is applied then, as its proposer's action.
    """
    tournament, battle = _battle_locked(battle_id)
    who = _who(actor, tournament)
    if answer not in ANSWERS:
        raise refusal(_('answer: "confirm", "decline" or "withdraw"'), "validation")
    _playing(tournament)
    proposal = BattleProposal.objects.filter(battle=battle, pk=proposal_id).first()
    if proposal is None:
        raise refusal(
            _("there is no proposal %(id)s at this table") % {"id": proposal_id}, "not_found"
        )
    if proposal.status != BattleProposal.Status.OPEN:
        raise refusal(
            _("this proposal is %(status)s already") % {"status": proposal.get_status_display()},
            "status",
        )
    if not who.judge:
        if answer == "withdraw" and who.army != proposal.by:
            raise refusal(_("only its proposer (or a judge) withdraws a proposal"), "forbidden")
        if answer != "withdraw" and who.army != proposal.to:
            raise refusal(
                _("only the player it concerns (or a judge) confirms or declines a proposal"),
                "forbidden",
            )
    seats = _seats(battle)
    turn = campaign_turn_number(tournament.campaign)
    if answer == "confirm":
        if battle.status != Status.BATTLE:
            raise refusal(
                _("no battle is being played at this table (%(status)s)")
                % {"status": battle.status},
                "status",
            )
        move = dict(proposal.action)
        state, outcome, draws = _played(_game(battle), battle, move, seats)
        proposal.status = BattleProposal.Status.CONFIRMED
    else:
        proposal.status = (
            BattleProposal.Status.DECLINED
            if answer == "decline"
            else BattleProposal.Status.WITHDRAWN
        )
    proposal.answered_at = now
    proposal.answered_by = (who.army or who.actor.label)[:150]
    proposal.save(update_fields=["status", "answered_at", "answered_by"])
    if answer == "confirm":
        _played_store(
            tournament,
            battle,
            state,
            outcome,
            seats=seats,
            who=who,
            move=move,
            turn=turn,
            now=now,
            draws=draws,
            proposal=proposal,
        )
    else:
        _table_log(
            tournament,
            battle,
            actor=who.actor,
            action=f"battle_proposal_{proposal.status}",
            now=now,
            turn=turn,
            proposal=proposal.pk,
            by_army=proposal.by,
            to_army=proposal.to,
            move=proposal.action,
        )
        _save(battle, now)
    announce(tournament, "battle")
    return battle


def _spared_by_clan(outcome: TableOutcome, seats: Mapping[str, BattleSeat]) -> set[str]:
    """The winner and his clan's armies: they never fight each other, so they survive."""
    if outcome.kind != "win" or outcome.winner is None or outcome.winner not in seats:
        return set()
    clan = seats[outcome.winner].army.clan
    return {code for code, s in seats.items() if s.army.clan == clan}


def _decided(
    tournament: Tournament,
    battle: Battle,
    outcome: TableOutcome,
    *,
    seats: Mapping[str, BattleSeat],
    who: _Who,
    turn: int,
    now: datetime,
) -> None:
    battle.outcome = _outcome_json(outcome)
    battle.decided_at = now
    _proposals_lapse(battle, now)
    if outcome.kind == "truce":
        _end(tournament, battle, outcome, survivors=set(seats), who=who, turn=turn, now=now)
        return
    spared = _spared_by_clan(outcome, seats)
    undecided = set(seats) - spared - set(outcome.losers)
    if not undecided:
        _end(tournament, battle, outcome, survivors=spared, who=who, turn=turn, now=now)
        return
    battle.status = Status.DECIDED
    _save(battle, now, "status", "outcome", "decided_at")
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_decided",
        now=now,
        turn=turn,
        outcome=battle.outcome,
        to_choose=sorted(undecided),
    )


@unit_of_work()
def battle_result_choose(
    *, battle_id: int, survivors: Sequence[str], actor: Actor | Player, now: datetime
) -> Battle:
    """R8: the winner's General (or a judge) names the armies that survive; the rest of the
    armies that did not lose are destroyed by his choice and may reform the next turn.
    """
    tournament, battle = _battle_locked(battle_id)
    who = _who(actor, tournament)
    _playing(tournament)
    seats = _seats(battle)
    outcome = _outcome_of(battle.outcome) if battle.outcome else None
    if not who.judge and (outcome is None or who.army != outcome.winner):
        raise refusal(
            _("only the winner's General (or a judge) chooses who survives (R8)"), "forbidden"
        )
    if battle.status == Status.ENDED:
        raise refusal(_("the battle has ended already; a judge may correct its result"), "status")
    if battle.status != Status.DECIDED or outcome is None:
        raise refusal(
            _("there is no winner's choice to make at this table (%(status)s)")
            % {"status": battle.status},
            "status",
        )
    named = list(dict.fromkeys(survivors))
    for code in named:
        if code not in seats:
            raise refusal(
                _('survivors: "%(army)s" is not in this battle') % {"army": code}, "validation"
            )
        if code in outcome.losers:
            raise refusal(
                _('survivors: "%(army)s" lost the game and is destroyed (R8)') % {"army": code},
                "validation",
            )
    chosen = set(named) | _spared_by_clan(outcome, seats)
    turn = campaign_turn_number(tournament.campaign)
    _end(tournament, battle, outcome, survivors=chosen, who=who, turn=turn, now=now)
    announce(tournament, "battle")
    return battle


def _end(
    tournament: Tournament,
    battle: Battle,
    outcome: TableOutcome,
    *,
    survivors: Collection[str],
    who: _Who,
    turn: int,
    now: datetime,
) -> None:
    """The battle's result on the map: casualties (R8, R9), ``in_battle`` off, control (R6)."""
    campaign = tournament.campaign
    seats = _seats(battle)
    control_before = province_controller(campaign, battle.province)
    casualties = board_battle_result(
        campaign=campaign,
        province=battle.province,
        outcome=outcome,
        armies={code: seat.army for code, seat in seats.items()},
        survivors=survivors,
        turn=turn,
    )
    battle.status = Status.ENDED
    battle.ended_at = now
    battle.outcome = {
        **_outcome_json(outcome),
        "survivors": sorted(set(seats) - {c.army for c in casualties}),
        "turn": turn,
        "control_before": control_before,
        "control_after": province_controller(campaign, battle.province),
    }
    battle.casualties = [_casualty_json(c) for c in casualties]
    battle.decided_at = battle.decided_at or now
    _save(battle, now, "status", "ended_at", "outcome", "casualties", "decided_at")
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_ended",
        now=now,
        turn=turn,
        outcome=battle.outcome,
        casualties=battle.casualties,
    )
    _table_after(tournament, battle, fought=set(seats), turn=turn, now=now, actor=who.actor)


def _table_after(
    tournament: Tournament,
    battle: Battle,
    *,
    fought: Collection[str],
    turn: int,
    now: datetime,
    actor: Actor,
) -> None:
    """After a result, whoever is still together in the province sits at the next table."""
    campaign = tournament.campaign
    present = province_armies(campaign, battle.province)
    waiting = Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=GATHERING_STATUSES
    ).first()
    several = len({a.clan for a in present.values()}) >= 2
    if waiting is not None and not several:
        waiting.status = Status.DISPERSED
        waiting.ended_at = now
        _save(waiting, now, "status", "ended_at")
        _table_log(tournament, waiting, actor=actor, action="battle_dispersed", now=now, turn=turn)
        return
    if waiting is not None or not several:
        return
    votes = {code: "peace" for code in present if code in fought}
    table = _open_table(
        tournament, province=battle.province, armies=present, turn=turn, now=now, votes=votes
    )
    _table_log(
        tournament,
        table,
        actor=actor,
        action="battle_opened",
        now=now,
        turn=turn,
        armies=sorted(present),
        after_battle=battle.pk,
        status=table.status,
    )


# --- A judge's correction --------------------------------------------------------------------


@unit_of_work()
def battle_correct(
    *,
    battle_id: int,
    kind: str,
    winner: str | None,
    survivors: Sequence[str],
    reason: str,
    actor: Actor | Player,
    now: datetime,
) -> Battle:
    """A judge corrects an ended battle's result: its casualties are undone on the board
    (the armies stand in the province again) and the corrected ones applied, with a reason.

    The destroyed are destroyed in the turn the battle ended in, as before. Losers of the
    corrected result are the original losers not named as winner or survivor; every other
    army not named is destroyed by the winner's choice.
    """
    tournament, battle = _battle_locked(battle_id)
    who = _who(actor, tournament)
    if not who.judge:
        raise refusal(_("only a judge corrects a battle's result"), "forbidden")
    if not reason.strip():
        raise refusal(_("reason: say why the result is corrected"), "validation")
    if kind not in OUTCOME_KINDS:
        raise refusal(_('kind: "win" or "truce"'), "validation")
    if battle.status != Status.ENDED or not battle.outcome:
        raise refusal(
            _("only an ended battle's result is corrected (this one is %(status)s)")
            % {"status": battle.status},
            "status",
        )
    seats = _seats(battle)
    if kind == "win" and winner not in seats:
        raise refusal(
            _('winner: "%(army)s" is not in this battle') % {"army": winner or ""}, "validation"
        )
    if kind == "truce" and winner:
        raise refusal(_("winner: a truce has no winner"), "validation")
    for code in survivors:
        if code not in seats:
            raise refusal(
                _('survivors: "%(army)s" is not in this battle') % {"army": code}, "validation"
            )
    campaign = tournament.campaign
    if Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=FIGHTING_STATUSES
    ).exists():
        raise refusal(
            _("another battle is going on in this province; correct this one after it ends"),
            "busy",
        )
    before = {"outcome": battle.outcome, "casualties": battle.casualties}
    turn = int(battle.outcome.get("turn") or campaign_turn_number(campaign))
    restored, kept_off = board_casualties_restore(
        campaign=campaign,
        province=battle.province,
        armies={code: seat.army for code, seat in seats.items()},
        casualties=battle.casualties or [],
        turn=turn,
    )
    at_table = {c: s for c, s in seats.items() if c not in kept_off}
    if kind == "truce":
        outcome = TableOutcome(kind="truce", winner=None, losers=(), reason=reason.strip())
        alive = set(at_table)
    else:
        if winner in kept_off:
            raise refusal(
                _("winner: %(army)s has reformed or moved since; move it back first")
                % {"army": winner},
                "validation",
            )
        assert winner is not None
        losers = tuple(
            code
            for code in battle.outcome.get("losers") or ()
            if code in at_table and code != winner and code not in survivors
        )
        outcome = TableOutcome(kind="win", winner=winner, losers=losers, reason=reason.strip())
        alive = (set(survivors) | _spared_by_clan(outcome, seats)) & set(at_table)
    casualties = board_battle_result(
        campaign=campaign,
        province=battle.province,
        outcome=outcome,
        armies={code: seat.army for code, seat in at_table.items()},
        survivors=alive,
        turn=turn,
        control_before=(battle.outcome.get("control_before"),),
    )
    battle.outcome = {
        **_outcome_json(outcome),
        "survivors": sorted(set(seats) - {c.army for c in casualties} - set(kept_off)),
        "turn": turn,
        "control_before": battle.outcome.get("control_before"),
        "control_after": province_controller(campaign, battle.province),
        "corrected": True,
    }
    battle.casualties = [_casualty_json(c) for c in casualties]
    _save(battle, now, "outcome", "casualties")
    _table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_corrected",
        now=now,
        turn=campaign_turn_number(campaign),
        reason=reason.strip(),
        before=before,
        after={"outcome": battle.outcome, "casualties": battle.casualties},
        restored=restored,
        not_restored=kept_off,
    )
    _resync_after_correction(tournament, battle, fought=set(seats), now=now, actor=who.actor)
    announce(tournament, "battle")
    return battle


def _resync_after_correction(
    tournament: Tournament, battle: Battle, *, fought: set[str], now: datetime, actor: Actor
) -> None:
    """The table that gathered after the battle follows the corrected board."""
    campaign = tournament.campaign
    turn = campaign_turn_number(campaign)
    waiting = Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=GATHERING_STATUSES
    ).first()
    if waiting is not None:
        present = province_armies(campaign, battle.province)
        seats = _seats(waiting)
        if len({a.clan for a in present.values()}) >= 2:
            joined = [c for c in present if c not in seats]
            BattleSeat.objects.filter(battle=waiting).exclude(army__code__in=list(present)).delete()
            BattleSeat.objects.bulk_create(
                [
                    BattleSeat(
                        battle=waiting,
                        army=present[c],
                        joined_turn=turn,
                        vote="peace" if c in fought else "",
                        voted_at=now if c in fought else None,
                    )
                    for c in joined
                ]
            )
            votes = BattleSeat.objects.filter(battle=waiting).values_list("vote", flat=True)
            waiting.status = Status.PEACE if all(v == "peace" for v in votes) else Status.MEETING
            _save(waiting, now, "status")
            return
    _table_after(tournament, battle, fought=fought, turn=turn, now=now, actor=actor)


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
        _save(battle, now, "status", "ended_at")
        # What battles_resume needs to put the table back as it was, should the judge
        # reopen the game.
        _table_log(
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
        _table_log(tournament, battle, actor=actor, action="battle_resumed", now=now, was=was)
        resumed += 1
    if resumed:
        announce(tournament, "battle")
    return resumed


__all__ = [
    "battle_act",
    "battle_correct",
    "battle_result_choose",
    "battles_resume",
    "battles_stop",
    "battles_sync",
    "battles_undo_problem",
    "meeting_vote",
]
