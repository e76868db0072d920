"""What each viewer may see of the tournament itself (R1.1): the board, the clock, the roles
and the messages, cut for him from one reading of the tournament.

Pages, the API and live updates all build their payloads from ``tournament_state``
(``referees.reading.state``, which adds the battle tables), so a thing hidden from a role is
never sent to it by any of them. Who sees what is decided in ``referees.kernel.visibility``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q

from referees.kernel.deadlines import tournament_clock
from referees.kernel.visibility import Sight, Viewer, clan_roles, player_row, viewer_sight
from referees.models import Instruction, JudgeCall, Player, Tournament
from referees.reading.history import score_history
from referees.reading.log import deadline_flags
from referees.reading.messages import (
    CALL_CLOSED_SHOWN,
    call_row,
    calls_queued,
    instruction_row,
    instructions_readable,
    latest_announcements,
)
from referees.texts.words import REJECTIONS
from sl5r.rules.clans import CLANS
from sl5r.rules.roles import Role
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
    sight = viewer_sight(tournament, viewer, reading.roles)
    # Once the game is over its tables are stopped: nobody is in a battle any more, and the
    # map shows no swords (a General read "your army is in a battle" after the end).
    finished = tournament.phase == Tournament.Phase.FINISHED
    control = reading.control
    if sight.provinces is not None:
        control = {p: c for p, c in control.items() if p in sight.provinces}
    state: dict[str, Any] = {
        "tournament": _tournament_row(reading, now),
        "viewer": {
            "kind": viewer.kind,
            "sees_all_armies": sight.all_armies,
            "player": player_row(viewer.player) if viewer.player else None,
        },
        "visible_provinces": None if sight.provinces is None else sorted(sight.provinces),
        "armies": _armies_seen(reading, viewer, sight, finished=finished),
        "control": control,
        "orders": _orders_seen(reading, sight),
        "meetings": [] if finished else _meetings_seen(reading, sight),
    }
    if sight.scores:
        # The whole board's control, whatever the viewer sees of it: scores count it all.
        state.update(_scores(tournament.campaign, reading.control))
    last = reading.last
    if viewer.kind == "judge" and last is not None and last.result:
        state["last_draws"] = last.result.get("draws", [])
    if viewer.kind == "judge":
        state["flags"] = deadline_flags(tournament=tournament)
    # R3.1: which clans have declared their starting positions (every clan for a judge, his
    # own for a player), never where.
    declared = declared_clans(reading.armies.values(), reading.placed)
    if viewer.kind == "judge":
        state["declared_clans"] = declared
    elif viewer.player is not None:
        state["declared_clans"] = {viewer.player.clan: declared.get(viewer.player.clan, False)}
    state.update(_own_army_seen(reading, viewer, sight))
    state.update(_messages_seen(reading, viewer))
    if sight.scores:
        state["score_history"] = copy.deepcopy(
            reading.remembered("score_history", lambda: score_history(tournament=tournament))
        )
    return state


def _tournament_row(reading: TournamentReading, now: datetime) -> dict[str, Any]:
    """The tournament's settings, its turn and its clock: the same for every viewer."""
    tournament = reading.tournament
    campaign = tournament.campaign
    open_turn = reading.open_turn
    last = reading.last
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "version": campaign.version,
        "turn": open_turn.number if open_turn else (last.number if last else 0),
        # Once over, the last turn played: "End the game" leaves its open turn
        # unplayed, so every page says "ended after turn 5", never "turn 6".
        "ended_after_turn": (
            (last.number if last else 0) if tournament.phase == Tournament.Phase.FINISHED else None
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
    }


def _armies_seen(
    reading: TournamentReading, viewer: Viewer, sight: Sight, *, finished: bool
) -> list[dict[str, Any]]:
    """The armies on the board that ``viewer`` sees, as rows."""
    # R3.1: until negotiation a clan's declared positions are its own: a player sees his
    # clan's armies only (as far as R1.1 lets him), the public none; judges see them all.
    secret_clan = _positions_secret_from(reading.tournament, viewer)
    rows = []
    for code, spot in reading.placed.items():
        army = reading.armies.get(code)
        if army is None:
            continue
        if secret_clan is not None and army.clan != secret_clan:
            continue
        if sight.all_armies or code == sight.own_army:
            rows.append(_army_row(code, army.clan, spot))
    if finished:
        rows = [{**row, "in_battle": False} for row in rows]
    return rows


def _orders_seen(reading: TournamentReading, sight: Sight) -> list[dict[str, Any]]:
    """The open turn's orders so far that the viewer may read: every one, his clan's, or his
    own army's."""
    orders: list[dict[str, Any]] = []
    if reading.open_turn is None or not (sight.orders_of_clan or sight.own_army):
        return orders
    by_pk = {a.pk: a for a in reading.armies.values()}
    for aid, order in reading.current_orders.items():
        army = by_pk[aid]
        if (
            sight.orders_of_clan == "*"
            or army.clan == sight.orders_of_clan
            or army.code == sight.own_army
        ):
            orders.append(_order_row(order, army.code))
    return orders


def _meetings_seen(reading: TournamentReading, sight: Sight) -> list[dict[str, Any]]:
    """The last turn's meetings still on the map, as far as the viewer sees them."""
    last = reading.last
    meetings: list[dict[str, Any]] = []
    if last is None or not last.result:
        return meetings
    # Clans with an army in each province now: a meeting whose battle has ended with one
    # clan left (or whose armies have moved on) is no longer shown on the map (issue 30).
    clans_in: dict[str, set[str]] = {}
    for code, spot in reading.placed.items():
        army = reading.armies.get(code)
        if army is not None and spot.province is not None:
            clans_in.setdefault(spot.province, set()).add(army.clan)
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
    return meetings


def _scores(campaign: Campaign, control: dict[str, str | None]) -> dict[str, Any]:
    """Each clan's points now (R12) and the Small Farms its Generals would bring (R7)."""
    breakdown = score_breakdown(
        campaign_game_map(campaign),
        control,
        [c for c in CLANS if c not in campaign.excluded_clans],
    )
    return {
        "scores": {
            clan: {
                "home_provinces": s.home_provinces,
                "other_provinces": s.other_provinces,
                "castles": s.castles,
                "total": s.total,
            }
            for clan, s in breakdown.items()
        },
        # R7: the Small Farms each clan's Generals would bring to a battle starting now.
        "small_farms": small_farms(campaign_game_map(campaign), control, list(breakdown)),
    }


def _own_army_seen(reading: TournamentReading, viewer: Viewer, sight: Sight) -> dict[str, Any]:
    """What a player reads of his own army and, for a Daimyo or Karo, of his clan's: why its
    last order was rejected, and where a destroyed army may reform (R9)."""
    seen: dict[str, Any] = {}
    open_turn = reading.open_turn
    last = reading.last
    if sight.own_army and last is not None and last.result:
        seen["last_order"] = _own_rejection(last, sight.own_army)
    reform_turn = open_turn.number if open_turn else (last.number + 1 if last else 1)
    if viewer.kind == "player" and sight.own_army:
        reform = _reading_reform(
            reading, army_code=sight.own_army, turn=reform_turn, sees_map=sight.all_armies
        )
        if reform is not None:
            seen["reform"] = reform
    if (
        viewer.kind == "player"
        and viewer.player is not None
        and viewer.player.role in (Player.Role.DAIMYO, Player.Role.KARO)
        and sight.all_armies
    ):
        # R9, R1.1: the Daimyo (and Karo) see the map, so they know where each destroyed
        # General of the clan may reform; the General under them is told to ask.
        clan_reforms = {}
        for code, army in reading.armies.items():
            if army.clan != viewer.player.clan:
                continue
            reform = _reading_reform(reading, army_code=code, turn=reform_turn, sees_map=True)
            if reform is not None:
                clan_reforms[code] = reform
        seen["clan_reforms"] = clan_reforms
    return seen


def _messages_seen(reading: TournamentReading, viewer: Viewer) -> dict[str, Any]:
    """The announcements, and what ``viewer`` may read of instructions and calls (R1.1)."""
    seen: dict[str, Any] = {"announcements": [dict(a) for a in reading.announcements]}
    if viewer.kind == "player":
        # R1.1: a Daimyo's written instructions, to his Generals (a Karo reads none).
        seen["instructions"] = [
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
        seen["call"] = call_row(own) if own is not None else None
    if viewer.kind == "judge":
        seen["calls"] = [call_row(c) for c in calls_queued(reading.calls, now=reading.now)]
    return seen


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
