"""The played turns as each viewer may read them afterwards (R1.1): the points after every
turn (R12), the numbers of the turns played, and one turn with its orders, draws and board.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referees.kernel.visibility import Sight, Viewer, clan_roles, viewer_sight
from referees.models import Tournament
from sl5r.rules.clans import CLANS
from sl5r.rules.scoring import score_breakdown
from strategic_map.models import Army, Order, Turn
from strategic_map.selectors import campaign_game_map, turn_current_orders


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
    given = _orders_given(tournament, turn) if viewer.kind == "judge" else {}

    def visible(code: str) -> bool:
        return sight.all_armies or code == sight.own_army

    orders = _turn_orders(case, result, clan_of, given, visible)
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
    return {
        "turn": turn.number,
        "resolved_at": turn.resolved_at.isoformat() if turn.resolved_at else None,
        "resolved_by": turn.resolved_by if viewer.kind == "judge" else None,
        "sees_all_armies": sight.all_armies,
        "armies": armies,
        "control": control,
        "control_changes": _control_changes(tournament, case, control),
        "orders": orders,
        **_turn_events(result, sight),
        "scores": result.get("scores", {}) if sight.scores else None,
        # R11: revealed after the turn, so anyone can check its draws (docs/adjudication.md).
        "commitment": case.get("commitment"),
        "draw_seed": case.get("draw_seed"),
        "orders_digest": case.get("orders_digest"),
    }


def _orders_given(tournament: Tournament, turn: Turn) -> dict[str, Order]:
    """The orders of ``turn`` as they were given, by army code: who gave each, and when."""
    armies_by_pk = dict(Army.objects.filter(campaign=tournament.campaign).values_list("pk", "code"))
    return {armies_by_pk[aid]: order for aid, order in turn_current_orders(turn).items()}


def _turn_orders(
    case: dict[str, Any],
    result: dict[str, Any],
    clan_of: dict[str, Any],
    given: dict[str, Order],
    visible: Callable[[str], bool],
) -> list[dict[str, Any]]:
    """The orders of the visible armies with where each started and what became of it."""
    before = {a["id"]: a.get("province") for a in case.get("armies", [])}
    outcomes = {o["army"]: o for o in result.get("orders", [])}
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
    return orders


def _control_changes(
    tournament: Tournament, case: dict[str, Any], control: dict[str, Any]
) -> list[dict[str, Any]]:
    """The provinces of ``control`` (as far as the viewer sees) that changed hands."""
    # A case file lists only the provinces whose controller is not their home clan.
    control_before: dict[str, Any] = {
        **campaign_game_map(tournament.campaign).initial_control(
            tournament.campaign.excluded_clans
        ),
        **case.get("control", {}),
    }
    return [
        {"province": p, "before": control_before.get(p), "after": c}
        for p, c in sorted(control.items())
        if control_before.get(p) != c
    ]


def _turn_events(result: dict[str, Any], sight: Sight) -> dict[str, Any]:
    """The draws, meetings and reinforcements of the turn: all of them for a viewer who sees
    every army, else only the meetings of his own army."""
    if sight.all_armies:
        return {
            "draws": result.get("draws", []),
            "meetings": result.get("meetings", []),
            "reinforcements": result.get("reinforcements", []),
        }
    return {
        "draws": [],
        "meetings": [
            {"province": m["province"], "armies": [sight.own_army], "new": m["new"]}
            for m in result.get("meetings", [])
            if sight.own_army in m["armies"]
        ],
        "reinforcements": [],
    }
