"""What each viewer may see of a tournament (R1.1), decided in one place.

Pages, the API and live updates all build their payloads from ``tournament_state``, so a
thing hidden from a role is never sent to it by any of them: a General whose clan has a
Daimyo gets his own army, his province and the provinces next to it, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from referees.models import LogEntry, Player, Tournament
from sl5r.rules.clans import CLANS
from sl5r.rules.roles import (
    Role,
    general_visible_provinces,
    public_display_shows_armies,
    role_visibility,
)
from sl5r.rules.scoring import score_breakdown
from strategic_map.models import Army, Order, Turn
from strategic_map.selectors import campaign_game_map, turn_current_orders

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
    if viewer.kind == "public":
        shows = public_display_shows_armies(roles)
        return Sight(shows, None if shows else frozenset(), None, None, finished)
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
    spot = tournament.campaign.board.get("armies", {}).get(army_code or "", {})
    provinces = general_visible_provinces(
        campaign_game_map(tournament.campaign), spot.get("province")
    )
    return Sight(False, provinces, army_code, None, finished)


def _army_row(code: str, clan: str, spot: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": code,
        "clan": clan,
        "province": spot.get("province"),
        "in_battle": bool(spot.get("in_battle")),
        "destroyed": spot.get("province") is None,
        "destroyed_in_turn": spot.get("destroyed_in_turn"),
        "destroyed_by": spot.get("destroyed_by"),
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


def tournament_clock(tournament: Tournament, now: datetime) -> dict[str, Any]:
    """The clock as the server sees it: pages count down from ``remaining``, not their own."""
    if tournament.paused:
        remaining: float | None = tournament.paused_remaining
    elif tournament.deadline is not None:
        remaining = max(0.0, (tournament.deadline - now).total_seconds())
    else:
        remaining = None
    return {
        "phase": tournament.phase,
        "paused": tournament.paused,
        "deadline": tournament.deadline.isoformat() if tournament.deadline else None,
        "remaining": remaining,
        "server_time": now.isoformat(),
    }


def tournament_state(*, tournament: Tournament, viewer: Viewer, now: datetime) -> dict[str, Any]:
    """Everything ``viewer`` may see of the tournament now, as plain JSON-ready data."""
    campaign = tournament.campaign
    roles = clan_roles(tournament)
    sight = viewer_sight(tournament, viewer, roles)
    armies = {a.code: a for a in Army.objects.filter(campaign=campaign)}
    placed: dict[str, Any] = campaign.board.get("armies", {})
    visible_armies = []
    for code, spot in placed.items():
        army = armies.get(code)
        if army is None:
            continue
        if sight.all_armies or code == sight.own_army:
            visible_armies.append(_army_row(code, army.clan, spot))
    control: dict[str, Any] = campaign.board.get("control", {})
    if sight.provinces is not None:
        control = {p: c for p, c in control.items() if p in sight.provinces}

    turns = list(
        Turn.objects.filter(campaign=campaign)
        .exclude(status=Turn.Status.UNDONE)
        .order_by("number")
        .only("number", "status", "deadline", "result")
    )
    open_turn = next((t for t in turns if t.status == Turn.Status.OPEN), None)
    last = next((t for t in reversed(turns) if t.status == Turn.Status.RESOLVED), None)

    orders: list[dict[str, Any]] = []
    if open_turn is not None and (sight.orders_of_clan or sight.own_army):
        by_pk = {a.pk: a for a in armies.values()}
        for aid, order in turn_current_orders(open_turn).items():
            army = by_pk[aid]
            if (
                sight.orders_of_clan == "*"
                or army.clan == sight.orders_of_clan
                or army.code == sight.own_army
            ):
                orders.append(_order_row(order, army.code))

    meetings: list[dict[str, Any]] = []
    if last is not None and last.result:
        for meeting in last.result.get("meetings", []):
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
            "turns_total": tournament.turns_total,
            "ends_at": tournament.ends_at.isoformat() if tournament.ends_at else None,
            "turn_seconds": tournament.turn_seconds,
            "clan_abilities": campaign.clan_abilities,
            "base_hand": campaign.base_hand,
            "excluded_clans": list(campaign.excluded_clans),
            "time_zone": tournament.time_zone,
            "clock": tournament_clock(tournament, now),
        },
        "viewer": {
            "kind": viewer.kind,
            "sees_all_armies": sight.all_armies,
            "player": _player_row(viewer.player) if viewer.player else None,
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
            campaign.board.get("control", {}),
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
    if viewer.kind == "judge" and last is not None and last.result:
        state["last_draws"] = last.result.get("draws", [])
    return state


def _player_row(player: Player) -> dict[str, Any]:
    return {
        "id": player.pk,
        "name": player.name,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
    }


def tournament_log(
    *, tournament: Tournament, after: int = 0, limit: int = 1000
) -> list[dict[str, Any]]:
    """The log from entry ``after`` on, oldest first (for judges, and for export)."""
    rows = LogEntry.objects.filter(tournament=tournament, pk__gt=after).order_by("pk")[:limit]
    return [
        {
            "id": e.pk,
            "at": e.at.isoformat(),
            "by": e.actor,
            "action": e.action,
            "turn": e.turn,
            "reason": e.reason,
            "data": e.data,
        }
        for e in rows
    ]


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
