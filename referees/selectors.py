"""What each viewer may see of a tournament (R1.1), decided in one place.

Pages, the API and live updates all build their payloads from ``tournament_state``, so a
thing hidden from a role is never sent to it by any of them: a General whose clan has a
Daimyo gets his own army, his province and the provinces next to it, and nothing else.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from django.db.models import Q

from referees.models import Announcement, Instruction, JudgeCall, LogEntry, Player, Tournament
from referees.texts.log import log_actor_player, log_context, log_kind, log_text
from referees.texts.words import REJECTIONS
from sl5r.rules.clans import CLANS
from sl5r.rules.roles import (
    Role,
    general_visible_provinces,
    public_display_shows_armies,
    role_visibility,
)
from sl5r.rules.scoring import score_breakdown, small_farms
from sl5r.rules.turn import Army as RulesArmy
from sl5r.rules.turn import reform_first_turn, reform_provinces
from strategic_map.board import Board, Spot
from strategic_map.models import Army, Campaign, Order, Turn
from strategic_map.selectors import (
    ArmyIdentity,
    campaign_game_map,
    campaign_turn_state,
    turn_current_orders,
    turn_state_as_seen_by,
)

ViewerKind = Literal["judge", "player", "public"]


@dataclass(frozen=True)
class Viewer:
    kind: ViewerKind
    player: Player | None = None
    label: str = ""

    @classmethod
    def judge(cls, label: str = "judge") -> Viewer:
        return cls(kind="judge", label=label)

    @classmethod
    def public(cls) -> Viewer:
        return cls(kind="public")

    @classmethod
    def of_player(cls, player: Player) -> Viewer:
        return cls(kind="player", player=player)


def clan_roles(tournament: Tournament) -> dict[str, list[Role]]:
    roles: dict[str, list[Role]] = {}
    for clan, role in tournament.players.values_list("clan", "role"):
        roles.setdefault(clan, []).append(Role(role))
    return roles


def clan_held_roles(tournament: Tournament, clan: str) -> list[Role]:
    """The roles held in ``clan``: what its members may see and do depends on them (R1.1)."""
    return [Role(r) for r in tournament.players.filter(clan=clan).values_list("role", flat=True)]


@dataclass(frozen=True)
class Sight:
    """The part of the board a viewer sees: ``provinces`` None means all of them."""

    all_armies: bool
    provinces: frozenset[str] | None
    own_army: str | None
    orders_of_clan: str | None  # None: no orders; "*": every order
    scores: bool


def viewer_sight(tournament: Tournament, viewer: Viewer, roles: dict[str, list[Role]]) -> Sight:
    finished = tournament.phase == Tournament.Phase.FINISHED
    if viewer.kind == "judge":
        return Sight(True, None, None, "*", True)
    if finished:
        # Issue 30: once the game is over nothing is secret any more; players and the
        # public see the final board, the standings and every played turn (R12).
        return Sight(
            True,
            None,
            viewer.player.army.code if viewer.player and viewer.player.army else None,
            None,
            True,
        )
    if viewer.kind == "public":
        shows = public_display_shows_armies(roles)
        # R1.1: scores at the end; and, where no clan has a Daimyo, every player sees the whole
        # board, so the screen may show each clan's provinces and points so far (issue 14).
        return Sight(shows, None if shows else frozenset(), None, None, finished or shows)
    player = viewer.player
    assert player is not None
    role = Role(player.role)
    sight = role_visibility(role, roles.get(player.clan, []))
    army_code = player.army.code if player.army else None
    if sight.sees_all_armies:
        orders = player.clan if role is Role.DAIMYO else None
        if role is Role.GENERAL:
            orders = None
        return Sight(True, None, army_code, orders, finished)
    provinces = general_visible_provinces(
        campaign_game_map(tournament.campaign),
        Board.of(tournament.campaign).province_of(army_code or ""),
    )
    return Sight(False, provinces, army_code, None, finished)


def _own_rejection(turn: Turn, army_code: str) -> dict[str, Any] | None:
    """Why the army's order was rejected at the last deadline, or None when it was not.

    A General who may not see the map is answered only from what he may see when he gives
    an order (R1.1), so the turn may still reject it: this is where he reads why.
    """
    for outcome in (turn.result or {}).get("orders", []):
        if outcome.get("army") != army_code or outcome.get("outcome") != "rejected":
            continue
        code = str(outcome.get("reason") or "").split(":", 1)[0]
        reason = REJECTIONS.get(code)
        return {"turn": turn.number, "reason_code": code, "reason": str(reason or code)}
    return None


def _army_row(code: str, clan: str, spot: Spot) -> dict[str, Any]:
    return {
        "id": code,
        "clan": clan,
        "province": spot.province,
        "in_battle": spot.in_battle,
        "destroyed": spot.destroyed,
        "destroyed_in_turn": spot.destroyed_in_turn,
        "destroyed_by": spot.destroyed_by,
        # R9: the first turn it may reform in, for whoever sees the army destroyed.
        "reform_from": (
            reform_first_turn(
                RulesArmy(
                    id=code,
                    clan=clan,
                    province=None,
                    destroyed_in_turn=spot.destroyed_in_turn,
                    destroyed_by=spot.destroyed_by,
                )
            )
            if spot.destroyed
            else None
        ),
    }


def _order_row(order: Order, code: str) -> dict[str, Any]:
    return {
        "army": code,
        "kind": order.kind,
        "path": list(order.path),
        "reform": order.reform or None,
        "claim": order.claim,
        "on_swap": order.on_swap,
        "given_at": order.created_at.isoformat(),
        "given_by": order.author,
        "by_judge": order.by_judge,
    }


def clock_left(tournament: Tournament, now: datetime) -> float | None:
    """The seconds the clock shows at ``now`` (paused or running); None when none runs."""
    if tournament.paused:
        return tournament.paused_remaining
    if tournament.deadline is not None:
        return max(0.0, (tournament.deadline - now).total_seconds())
    return None


def tournament_clock(tournament: Tournament, now: datetime) -> dict[str, Any]:
    """The clock as the server sees it: pages count down from ``remaining``, not their own."""
    remaining = clock_left(tournament, now)
    return {
        "phase": tournament.phase,
        "paused": tournament.paused,
        "deadline": tournament.deadline.isoformat() if tournament.deadline else None,
        "remaining": remaining,
        "server_time": now.isoformat(),
    }


@dataclass
class TournamentReading:
    """Everything the views of a tournament are made from, read once for a version.

    A deadline asks for every view of the new version at once (issue 33): the queries, not
    the filtering, were the cost of a view (10-12 queries each, most of the time spent
    compiling them), so they are run once here and each viewer's view is cut from the
    result (``tournament_view``) in memory. Read-only once made; ``memo`` keeps what a
    view computes from it alone (scores, a destroyed army's reform), the same for all.
    """

    tournament: Tournament
    now: datetime
    roles: dict[str, list[Role]]
    armies: dict[str, Army]
    board: Board
    placed: dict[str, Spot]
    control: dict[str, str | None]
    turns: list[Turn]
    open_turn: Turn | None
    last: Turn | None
    current_orders: dict[int, Order]
    announcements: list[dict[str, Any]]
    instructions: list[Instruction]
    calls: list[JudgeCall]
    memo: dict[Any, Any] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return int(self.tournament.campaign.version)

    def remembered(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]


def tournament_reading(*, tournament: Tournament, now: datetime) -> TournamentReading:
    """Read the tournament for its views (see ``TournamentReading``): 8 queries."""
    campaign = tournament.campaign
    turns = list(
        Turn.objects.filter(campaign=campaign)
        .exclude(status=Turn.Status.UNDONE)
        .order_by("number")
        .only("number", "status", "deadline", "result", "draw_seed")
    )
    open_turn = next((t for t in turns if t.status == Turn.Status.OPEN), None)
    last = next((t for t in reversed(turns) if t.status == Turn.Status.RESOLVED), None)
    board = Board.of(campaign)
    return TournamentReading(
        tournament=tournament,
        now=now,
        roles=clan_roles(tournament),
        armies={a.code: a for a in Army.objects.filter(campaign=campaign).order_by("id")},
        board=board,
        placed=board.spots(),
        control=board.control(),
        turns=turns,
        open_turn=open_turn,
        last=last,
        current_orders=turn_current_orders(open_turn) if open_turn is not None else {},
        announcements=latest_announcements(tournament=tournament),
        instructions=list(
            Instruction.objects.filter(tournament=tournament)
            .select_related("author", "recipient")
            .order_by("-created_at", "-id")
        ),
        calls=list(
            JudgeCall.objects.filter(tournament=tournament)
            .filter(Q(closed_at__isnull=True) | Q(closed_at__gte=now - CALL_CLOSED_SHOWN))
            .select_related("player", "player__army")
        ),
    )


def tournament_view(
    *,
    tournament: Tournament,
    viewer: Viewer,
    now: datetime,
    reading: TournamentReading | None = None,
) -> dict[str, Any]:
    """What ``viewer`` may see of the tournament itself now (R1.1), read once: the board,
    the clock, the roles, the messages — all but the battle tables, which sit above this
    module (``referees.reading.state.tournament_state`` adds them and checks the version).

    From ``reading`` when given (every view of a version from one reading), else read.
    """
    if reading is None:
        reading = tournament_reading(tournament=tournament, now=now)
    tournament = reading.tournament
    campaign = tournament.campaign
    roles = reading.roles
    sight = viewer_sight(tournament, viewer, roles)
    armies = reading.armies
    placed = reading.placed
    # R3.1: until negotiation a clan's declared positions are its own: a player sees his
    # clan's armies only (as far as R1.1 lets him), the public none; judges see them all.
    secret_clan = _positions_secret_from(tournament, viewer)
    visible_armies = []
    for code, spot in placed.items():
        army = armies.get(code)
        if army is None:
            continue
        if secret_clan is not None and army.clan != secret_clan:
            continue
        if sight.all_armies or code == sight.own_army:
            visible_armies.append(_army_row(code, army.clan, spot))
    control_all = reading.control  # also the scores' and Small Farms' input below
    control = control_all
    if sight.provinces is not None:
        control = {p: c for p, c in control_all.items() if p in sight.provinces}

    open_turn = reading.open_turn
    last = reading.last

    orders: list[dict[str, Any]] = []
    if open_turn is not None and (sight.orders_of_clan or sight.own_army):
        by_pk = {a.pk: a for a in armies.values()}
        for aid, order in reading.current_orders.items():
            army = by_pk[aid]
            if (
                sight.orders_of_clan == "*"
                or army.clan == sight.orders_of_clan
                or army.code == sight.own_army
            ):
                orders.append(_order_row(order, army.code))

    # Clans with an army in each province now: a meeting whose battle has ended with one
    # clan left (or whose armies have moved on) is no longer shown on the map (issue 30).
    clans_in: dict[str, set[str]] = {}
    for code, spot in placed.items():
        army = armies.get(code)
        if army is not None and spot.province is not None:
            clans_in.setdefault(spot.province, set()).add(army.clan)
    meetings: list[dict[str, Any]] = []
    # Once the game is over its tables are stopped: nobody is in a battle any more, and the
    # map shows no swords (a General read "your army is in a battle" after the end).
    finished = tournament.phase == Tournament.Phase.FINISHED
    if finished:
        visible_armies = [{**row, "in_battle": False} for row in visible_armies]
    if last is not None and last.result and not finished:
        for meeting in last.result.get("meetings", []):
            if len(clans_in.get(meeting["province"], ())) < 2:
                continue
            if sight.all_armies:
                meetings.append(meeting)
            elif sight.own_army in meeting["armies"]:
                meetings.append(
                    {
                        "province": meeting["province"],
                        "armies": [sight.own_army],
                        "new": meeting["new"],
                    }
                )

    state: dict[str, Any] = {
        "tournament": {
            "id": tournament.pk,
            "name": tournament.name,
            "version": campaign.version,
            "turn": open_turn.number if open_turn else (last.number if last else 0),
            # Once over, the last turn played: "End the game" leaves its open turn
            # unplayed, so every page says "ended after turn 5", never "turn 6".
            "ended_after_turn": (
                (last.number if last else 0)
                if tournament.phase == Tournament.Phase.FINISHED
                else None
            ),
            # R11: the open turn's draws are fixed by a seed shown only as this SHA-256.
            "commitment": open_turn.commitment if open_turn else None,
            "turns_total": tournament.turns_total,
            "ends_at": tournament.ends_at.isoformat() if tournament.ends_at else None,
            "turn_seconds": tournament.turn_seconds,
            "clan_abilities": campaign.clan_abilities,
            "base_hand": campaign.base_hand,
            "excluded_clans": list(campaign.excluded_clans),
            "time_zone": tournament.time_zone,
            # Issue 32: whether the big screen sounds its gong at each deadline (public).
            "screen_gong": tournament.screen_gong,
            "clock": tournament_clock(tournament, now),
        },
        "viewer": {
            "kind": viewer.kind,
            "sees_all_armies": sight.all_armies,
            "player": player_row(viewer.player) if viewer.player else None,
        },
        "visible_provinces": None if sight.provinces is None else sorted(sight.provinces),
        "armies": visible_armies,
        "control": control,
        "orders": orders,
        "meetings": meetings,
    }
    if sight.scores:
        breakdown = score_breakdown(
            campaign_game_map(campaign),
            control_all,
            [c for c in CLANS if c not in campaign.excluded_clans],
        )
        state["scores"] = {
            clan: {
                "home_provinces": s.home_provinces,
                "other_provinces": s.other_provinces,
                "castles": s.castles,
                "total": s.total,
            }
            for clan, s in breakdown.items()
        }
        # R7: the Small Farms each clan's Generals would bring to a battle starting now.
        state["small_farms"] = small_farms(
            campaign_game_map(campaign), control_all, list(breakdown)
        )
    if viewer.kind == "judge" and last is not None and last.result:
        state["last_draws"] = last.result.get("draws", [])
    if viewer.kind == "judge":
        state["flags"] = deadline_flags(tournament=tournament)
    # R3.1: which clans have declared their starting positions (every clan for a judge, his
    # own for a player), never where.
    declared = declared_clans(armies.values(), placed)
    if viewer.kind == "judge":
        state["declared_clans"] = declared
    elif viewer.player is not None:
        state["declared_clans"] = {viewer.player.clan: declared.get(viewer.player.clan, False)}
    if sight.own_army and last is not None and last.result:
        state["last_order"] = _own_rejection(last, sight.own_army)
    if viewer.kind == "player" and sight.own_army:
        reform = _reading_reform(
            reading,
            army_code=sight.own_army,
            turn=open_turn.number if open_turn else (last.number + 1 if last else 1),
            sees_map=sight.all_armies,
        )
        if reform is not None:
            state["reform"] = reform
    if (
        viewer.kind == "player"
        and viewer.player is not None
        and viewer.player.role in (Player.Role.DAIMYO, Player.Role.KARO)
        and sight.all_armies
    ):
        # R9, R1.1: the Daimyo (and Karo) see the map, so they know where each destroyed
        # General of the clan may reform; the General under them is told to ask.
        reform_turn = open_turn.number if open_turn else (last.number + 1 if last else 1)
        clan_reforms = {}
        for code, army in armies.items():
            if army.clan != viewer.player.clan:
                continue
            reform = _reading_reform(reading, army_code=code, turn=reform_turn, sees_map=True)
            if reform is not None:
                clan_reforms[code] = reform
        state["clan_reforms"] = clan_reforms
    state["announcements"] = [dict(a) for a in reading.announcements]
    if viewer.kind == "player":
        # R1.1: a Daimyo's written instructions, to his Generals (a Karo reads none).
        state["instructions"] = [
            instruction_row(i) for i in instructions_readable(reading.instructions, viewer)
        ]
    if viewer.kind == "player" and viewer.player is not None:
        player_id = viewer.player.pk
        own = next(
            (
                c
                for c in sorted(reading.calls, key=lambda c: (c.created_at, c.pk), reverse=True)
                if c.player_id == player_id
            ),
            None,
        )
        state["call"] = call_row(own) if own is not None else None
    if viewer.kind == "judge":
        state["calls"] = [call_row(c) for c in calls_queued(reading.calls, now=reading.now)]
    if sight.scores:
        state["score_history"] = copy.deepcopy(
            reading.remembered("score_history", lambda: score_history(tournament=tournament))
        )
    return state


def _reading_reform(
    reading: TournamentReading, *, army_code: str, turn: int, sees_map: bool
) -> dict[str, Any] | None:
    """``army_reform`` from the reading: once per army, turn and sight for all its views."""
    identities = [ArmyIdentity(code=a.code, clan=a.clan) for a in reading.armies.values()]
    found = reading.remembered(
        ("reform", army_code, turn, sees_map),
        lambda: army_reform(
            campaign=reading.tournament.campaign,
            army_code=army_code,
            turn=turn,
            sees_map=sees_map,
            armies=identities,
        ),
    )
    return copy.deepcopy(found) if found is not None else None


# The orders shown with a missed deadline: those that arrived from this long before it
# until the turn was resolved, and those refused as late up to this long after: on waking,
# the clock and the requests that waited in the socket race, and either may go first.
AROUND_DEADLINE = timedelta(seconds=60)
AROUND_DEADLINE_MAX = 100


def orders_around_deadline(
    *, tournament: Tournament, deadline: datetime, resolved_at: datetime
) -> list[dict[str, Any]]:
    """The orders given, withdrawn or refused around a deadline the site missed, in order
    of arrival: what a judge rules from."""
    rows = (
        LogEntry.objects.filter(
            tournament=tournament,
            action__in=("order_given", "order_withdrawn", "order_refused"),
            at__gte=deadline - AROUND_DEADLINE,
            at__lte=resolved_at + AROUND_DEADLINE,
        )
        .order_by("at", "pk")
        .values("pk", "action", "at", "actor", "data")
    )
    around = []
    for row in rows:
        data = row["data"]
        if row["at"] > resolved_at and not (
            row["action"] == "order_refused" and data.get("code") == "late"
        ):
            continue  # the next turn's orders
        around.append(
            {
                "entry": row["pk"],
                "action": row["action"],
                "at": row["at"].isoformat(),
                "by": row["actor"],
                "army": data.get("army"),
                "code": data.get("code"),
            }
        )
    return around[:AROUND_DEADLINE_MAX]


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


def army_reform(
    *,
    campaign: Campaign,
    army_code: str,
    turn: int,
    sees_map: bool,
    armies: Sequence[ArmyIdentity] | None = None,
) -> dict[str, Any] | None:
    """R9, for the General of a destroyed army only: the first turn it may reform in, and
    the castles it could reform in (none when his clan holds none of its home castles).
    A General who may not see the map (``sees_map`` False) is offered them as far as he
    knows the board: he learns of a lost castle at the deadline, as with any order.

    The engine decides both (``reform_first_turn``, ``reform_provinces``); nothing about
    other armies is in the answer (R1.1). None while the army is on the map.
    """
    board = campaign_turn_state(campaign, turn=turn, armies=armies)
    army = next((a for a in board.armies if a.id == army_code), None)
    if army is None or not army.destroyed:
        return None
    if not sees_map:
        board = turn_state_as_seen_by(board, army_code)
    provinces = reform_provinces(board, army_code)
    return {
        "from_turn": reform_first_turn(army),
        # False: the castles are those of his clan as far as he may know (R1.1), not as
        # they stand; his page says so and sends him to his Daimyo.
        "sees_map": sees_map,
        "provinces": list(provinces),
        "home_castles": sorted(
            p
            for p in board.game_map.home_provinces.get(army.clan, ())
            if p in board.game_map.castles
        ),
    }


SECRET_POSITION_PHASES = frozenset(
    {Tournament.Phase.SETUP, Tournament.Phase.PLANNING, Tournament.Phase.DEPLOYMENT}
)


def _positions_secret_from(tournament: Tournament, viewer: Viewer) -> str | None:
    """Before negotiation, the only clan whose armies ``viewer`` may see: his own (``""``
    for the public: none); None when nothing is held back (judges, and from negotiation on).
    """
    if viewer.kind == "judge" or tournament.phase not in SECRET_POSITION_PHASES:
        return None
    return viewer.player.clan if viewer.player is not None else ""


def declared_clans(armies: Iterable[Army], placed: Mapping[str, Any]) -> dict[str, bool]:
    """R3.1: each clan with armies, and whether every one of them has a starting position."""
    declared: dict[str, bool] = {}
    for army in armies:
        declared[army.clan] = declared.get(army.clan, True) and army.code in placed
    return {clan: declared[clan] for clan in CLANS if clan in declared}


def player_row(player: Player) -> dict[str, Any]:
    """A player as every answer shows him: the API, the state, the judge console."""
    return {
        "id": player.pk,
        "name": player.name,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
    }


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


# --- Announcements, the history of scores, past turns ----------------------------------------

LATEST_ANNOUNCEMENTS = 5


def latest_announcements(
    *, tournament: Tournament, limit: int = LATEST_ANNOUNCEMENTS
) -> list[dict[str, Any]]:
    """The newest announcements first: what everyone may read (text and time)."""
    rows = Announcement.objects.filter(tournament=tournament).order_by("-created_at", "-id")
    return [
        {"id": a.pk, "text": a.text, "at": a.created_at.isoformat()}
        for a in rows.only("id", "text", "created_at")[:limit]
    ]


# --- A Daimyo's written instructions (R1.1) ---------------------------------------------------

LATEST_INSTRUCTIONS = 20


def visible_instructions(
    *, tournament: Tournament, viewer: Viewer, limit: int = LATEST_INSTRUCTIONS
) -> list[dict[str, Any]]:
    """The written instructions ``viewer`` may read, newest first (R1.1).

    Judges read all of them; a Daimyo his clan's; a General those addressed to him or to
    all the Generals of his clan. Nobody else reads any: a Karo (messages go by word of
    mouth where there is one), other clans, the public.
    """
    rows = Instruction.objects.filter(tournament=tournament)
    player = viewer.player
    if viewer.kind == "judge":
        pass
    elif player is not None and player.role == Player.Role.DAIMYO:
        rows = rows.filter(clan=player.clan)
    elif player is not None and player.role == Player.Role.GENERAL:
        rows = rows.filter(clan=player.clan).filter(Q(recipient__isnull=True) | Q(recipient=player))
    else:
        return []
    rows = rows.select_related("author", "recipient").order_by("-created_at", "-id")[:limit]
    return [instruction_row(i) for i in rows]


def instructions_readable(
    newest_first: Sequence[Instruction], viewer: Viewer, *, limit: int = LATEST_INSTRUCTIONS
) -> list[Instruction]:
    """``visible_instructions`` of instructions already read (newest first): the same rule."""
    player = viewer.player
    if viewer.kind == "judge":
        rows = list(newest_first)
    elif player is not None and player.role == Player.Role.DAIMYO:
        rows = [i for i in newest_first if i.clan == player.clan]
    elif player is not None and player.role == Player.Role.GENERAL:
        rows = [
            i for i in newest_first if i.clan == player.clan and i.recipient_id in (None, player.pk)
        ]
    else:
        return []
    return rows[:limit]


def instruction_row(instruction: Instruction) -> dict[str, Any]:
    recipient = instruction.recipient
    return {
        "id": instruction.pk,
        "clan": instruction.clan,
        "author": instruction.author.name,
        "author_id": instruction.author_id,
        "to": recipient.name if recipient is not None else "all",
        "to_id": recipient.pk if recipient is not None else None,
        "text": instruction.text,
        "at": instruction.created_at.isoformat(),
        "turn": instruction.turn,
    }


# --- Calls for a judge -------------------------------------------------------------------------

# A closed call stays on the judges' list this long (what a colleague just settled), and on
# its caller's page until he has had time to read the judge's note.
CALL_CLOSED_SHOWN = timedelta(minutes=10)
CALLS_CLOSED_LISTED = 10


def _judge_name(label: str) -> str:
    # ``Actor.of_user`` labels a judge "judge <username>": the pages say "judge" themselves.
    return label.removeprefix("judge ")


def call_row(call: JudgeCall) -> dict[str, Any]:
    player = call.player
    return {
        "id": call.pk,
        "player": player.name,
        "player_id": player.pk,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
        "province": call.province or None,
        "battle": call.battle,
        "reason": call.reason,
        "text": call.text,
        "at": call.created_at.isoformat(),
        "taken_by": _judge_name(call.taken_by) if call.taken_by else None,
        "taken_at": call.taken_at.isoformat() if call.taken_at else None,
        "closed_at": call.closed_at.isoformat() if call.closed_at else None,
        # The caller himself withdrew it, or the judge who closed it.
        "withdrawn": bool(call.closed_at) and not call.closed_by.startswith("judge "),
        "closed_by": _judge_name(call.closed_by) if call.closed_by else None,
        "note": call.note,
    }


def calls_queued(calls: Iterable[JudgeCall], *, now: datetime) -> list[JudgeCall]:
    """``call_rows``'s calls, of calls already read: open ones oldest first, then those
    closed lately, newest first."""
    calls = list(calls)
    open_calls = sorted(
        (c for c in calls if c.closed_at is None), key=lambda c: (c.created_at, c.pk)
    )
    closed = sorted(
        (c for c in calls if c.closed_at is not None and c.closed_at >= now - CALL_CLOSED_SHOWN),
        key=lambda c: (c.closed_at, c.pk),
        reverse=True,
    )[:CALLS_CLOSED_LISTED]
    return open_calls + closed


def call_rows(*, tournament: Tournament, now: datetime) -> list[dict[str, Any]]:
    """The judges' queue: every open call, oldest first, then the calls closed lately."""
    calls = JudgeCall.objects.filter(tournament=tournament).select_related("player", "player__army")
    open_calls = list(calls.filter(closed_at__isnull=True).order_by("created_at", "id"))
    closed = list(
        calls.filter(closed_at__gte=now - CALL_CLOSED_SHOWN).order_by("-closed_at", "-id")[
            :CALLS_CLOSED_LISTED
        ]
    )
    return [call_row(c) for c in open_calls + closed]


def own_call(*, player: Player, now: datetime) -> dict[str, Any] | None:
    """The player's own call (R1.1: nobody else's): open, or closed within the last minutes."""
    call = (
        JudgeCall.objects.filter(tournament_id=player.tournament_id, player=player)
        .filter(Q(closed_at__isnull=True) | Q(closed_at__gte=now - CALL_CLOSED_SHOWN))
        .select_related("player", "player__army")
        .order_by("-created_at", "-id")
        .first()
    )
    return call_row(call) if call is not None else None


def _resolved_turns(tournament: Tournament) -> list[Turn]:
    return list(
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.RESOLVED)
        .order_by("number")
        .only("number", "case", "result", "resolved_at", "resolved_by")
    )


def score_history(*, tournament: Tournament) -> list[dict[str, Any]]:
    """Each clan's points (R12) after every resolved turn, from ``Turn.result["scores"]``.

    The first entry, turn 0, is the start of the game (the control turn 1 began with), so a
    chart of it starts where the clans started. Judges see it always, everyone else once the
    game has finished (``tournament_state`` decides).
    """
    turns = _resolved_turns(tournament)
    history: list[dict[str, Any]] = []
    campaign = tournament.campaign
    clans = [c for c in CLANS if c not in campaign.excluded_clans]
    first = turns[0] if turns else None
    if first is not None and first.number == 1 and first.case is not None:
        # A case file lists only the provinces whose controller is not their home clan.
        game_map = campaign_game_map(campaign)
        control = {
            **game_map.initial_control(campaign.excluded_clans),
            **first.case.get("control", {}),
        }
        start = score_breakdown(game_map, control, clans)
        history.append({"turn": 0, "scores": {clan: s.total for clan, s in start.items()}})
    for turn in turns:
        scores = (turn.result or {}).get("scores")
        if isinstance(scores, dict):
            history.append({"turn": turn.number, "scores": dict(scores)})
    return history


def resolved_turn_numbers(*, tournament: Tournament) -> list[int]:
    return list(
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.RESOLVED)
        .order_by("number")
        .values_list("number", flat=True)
    )


def _case_order_row(order: dict[str, Any]) -> dict[str, Any]:
    move = list(order.get("move") or [])
    reform = order.get("reform")
    return {
        "army": order["army"],
        "kind": "move" if move else ("reform" if reform else "hold"),
        "path": move,
        "reform": reform,
        "claim": order.get("claim", True),
        "on_swap": order.get("on_swap", "advance"),
        "late": bool(order.get("late")),
    }


def turn_history(*, tournament: Tournament, number: int, viewer: Viewer) -> dict[str, Any] | None:
    """A resolved turn as ``viewer`` may see it: the orders given with their outcomes, the
    draws (R11), the meetings, and the board after it (armies and control).

    Filtered as ``tournament_state`` filters: armies, orders, draws and meetings only where
    the viewer sees every army (judges; the public when no clan has a Daimyo), otherwise only
    his own army and the provinces he sees. None when turn ``number`` was not played.
    """
    turn = (
        Turn.objects.filter(
            campaign=tournament.campaign, number=number, status=Turn.Status.RESOLVED
        )
        .only("pk", "number", "case", "result", "resolved_at", "resolved_by", "deadline")
        .first()
    )
    if turn is None or turn.result is None:
        return None
    sight = viewer_sight(tournament, viewer, clan_roles(tournament))
    result: dict[str, Any] = turn.result
    case: dict[str, Any] = turn.case or {}
    clan_of = {a["id"]: a.get("clan") for a in case.get("armies", [])}
    clan_of.update({a["id"]: a.get("clan") for a in result.get("armies", [])})
    before = {a["id"]: a.get("province") for a in case.get("armies", [])}
    outcomes = {o["army"]: o for o in result.get("orders", [])}
    given: dict[str, Order] = {}
    if viewer.kind == "judge":
        armies_by_pk = dict(
            Army.objects.filter(campaign=tournament.campaign).values_list("pk", "code")
        )
        for aid, order in turn_current_orders(turn).items():
            given[armies_by_pk[aid]] = order

    def visible(code: str) -> bool:
        return sight.all_armies or code == sight.own_army

    orders = []
    for raw in case.get("orders", []):
        code = raw["army"]
        if not visible(code):
            continue
        row = _case_order_row(raw)
        outcome = outcomes.get(code, {})
        row.update(
            {
                "clan": clan_of.get(code),
                "from": before.get(code),
                "outcome": outcome.get("outcome"),
                "province": outcome.get("province"),
                "reason": outcome.get("reason"),
            }
        )
        given_order = given.get(code)
        if given_order is not None:
            row["given_by"] = given_order.author
            row["given_at"] = given_order.created_at.isoformat()
            row["by_judge"] = given_order.by_judge
        orders.append(row)
    armies = [
        {
            "id": a["id"],
            "clan": clan_of.get(a["id"]),
            "province": a.get("province"),
            "in_battle": bool(a.get("in_battle")),
            "destroyed": a.get("province") is None,
        }
        for a in result.get("armies", [])
        if visible(a["id"])
    ]
    control: dict[str, Any] = result.get("control", {})
    if sight.provinces is not None:
        control = {p: c for p, c in control.items() if p in sight.provinces}
    # A case file lists only the provinces whose controller is not their home clan.
    control_before: dict[str, Any] = {
        **campaign_game_map(tournament.campaign).initial_control(
            tournament.campaign.excluded_clans
        ),
        **case.get("control", {}),
    }
    control_changes = [
        {"province": p, "before": control_before.get(p), "after": c}
        for p, c in sorted(control.items())
        if control_before.get(p) != c
    ]
    if sight.all_armies:
        draws = result.get("draws", [])
        meetings = result.get("meetings", [])
        reinforcements = result.get("reinforcements", [])
    else:
        draws, reinforcements = [], []
        meetings = [
            {"province": m["province"], "armies": [sight.own_army], "new": m["new"]}
            for m in result.get("meetings", [])
            if sight.own_army in m["armies"]
        ]
    return {
        "turn": turn.number,
        "resolved_at": turn.resolved_at.isoformat() if turn.resolved_at else None,
        "resolved_by": turn.resolved_by if viewer.kind == "judge" else None,
        "sees_all_armies": sight.all_armies,
        "armies": armies,
        "control": control,
        "control_changes": control_changes,
        "orders": orders,
        "draws": draws,
        "meetings": meetings,
        "reinforcements": reinforcements,
        "scores": result.get("scores", {}) if sight.scores else None,
        # R11: revealed after the turn, so anyone can check its draws (docs/adjudication.md).
        "commitment": case.get("commitment"),
        "draw_seed": case.get("draw_seed"),
        "orders_digest": case.get("orders_digest"),
    }
