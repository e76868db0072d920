"""Orders (R4): a General's own, a Daimyo's swap choice, a judge's paper orders (tag
``orders``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import Router

from referees import services
from referees.api.common import ERROR_NOT_PLAYER, ERRORS, judge_of, player_of
from referees.api.schemas.orders import OrderIn, OrderOut, SwapChoiceIn
from referees.http.auth import CLAIMED, SIGNED_IN, caller_of, caller_recheck
from referees.http.ratelimit import rate_limit
from referees.kernel.core import TournamentError
from referees.services import OrderInput
from sl5r.serving.interface import request_received_at
from strategic_map.models import Order

router = Router()


def _order_out(order: Order) -> dict[str, Any]:
    return {
        "army": order.army.code,
        "turn": order.turn.number,
        "kind": order.kind,
        "path": list(order.path),
        "reform": order.reform or None,
        "claim": order.claim,
        "on_swap": order.on_swap,
        "given_at": order.created_at,
        "given_by": order.author,
        "by_judge": order.by_judge,
    }


def _order_input(payload: OrderIn) -> OrderInput:
    return OrderInput(
        kind=payload.kind,
        path=tuple(payload.path),
        reform=payload.reform,
        claim=payload.claim,
        on_swap=payload.on_swap,
        turn=payload.turn,
    )


def _player_order(request: HttpRequest, tournament_id: int, order: OrderInput) -> dict[str, Any]:
    # R4: late or not by when the order reached the server, not when a thread took it up.
    now = request_received_at(request)
    claim = caller_of(request).claim
    if claim is not None:
        # The link or session is checked by the service under the lock, against the players
        # it reads once per frame; only a refusal of it reads the player here, to answer
        # 401, 403 or 404 as for any other request.
        rate_limit("orders", f"player:{claim.player_id}")
        try:
            stored = services.order_give_claimed(
                tournament_id=tournament_id, claim=claim, order=order, now=now
            )
        except TournamentError as refused:
            if refused.code != "bad_token":
                raise
        else:
            return _order_out(stored)
    player = caller_recheck(request).player
    if player is None or player.tournament_id != tournament_id:
        player_of(request, tournament_id)  # 404 for no tournament, else 403
        raise PermissionDenied(ERROR_NOT_PLAYER)
    if claim is None:
        rate_limit("orders", f"player:{player.pk}")
    return _order_out(services.order_give(player=player, order=order, now=now))


@router.put(
    "/tournaments/{tournament_id}/orders/mine",
    response={200: OrderOut, **ERRORS},
    auth=CLAIMED,
    tags=["orders"],
    summary="Give or change my army's order (General)",
)
def order_give(request: HttpRequest, tournament_id: int, payload: OrderIn) -> dict[str, Any]:
    """R4: the last order given before the deadline counts. An order the turn would reject
    is refused with 422 and the engine's reason code (e.g. ``not_adjacent``); after the
    deadline, 409 ``late``. Limited per player (``SL5R_RATE_LIMITS["orders"]``).
    """
    return _player_order(request, tournament_id, _order_input(payload))


@router.delete(
    "/tournaments/{tournament_id}/orders/mine",
    response={200: OrderOut, **ERRORS},
    auth=CLAIMED,
    tags=["orders"],
    summary="Withdraw my army's order (General)",
)
def order_withdraw(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    """The army holds (and claims) as with no order; recorded as a ``withdraw`` order."""
    return _player_order(request, tournament_id, OrderInput(kind=Order.Kind.WITHDRAW))


@router.put(
    "/tournaments/{tournament_id}/armies/{code}/on-swap",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Decide where a swap battle is fought (Daimyo, R5.3)",
)
def swap_choice(
    request: HttpRequest, tournament_id: int, code: str, payload: SwapChoiceIn
) -> dict[str, Any]:
    """Where the clan has a Daimyo, he chooses ``on_swap`` for its armies' move orders."""
    _, player = player_of(request, tournament_id)
    rate_limit("orders", f"player:{player.pk}")
    stored = services.order_swap_choice(
        player=player, army_code=code, on_swap=payload.on_swap, now=request_received_at(request)
    )
    return _order_out(stored)


def _judge_order(
    request: HttpRequest, tournament_id: int, code: str, order: OrderInput
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    stored = services.order_enter(
        tournament_id=tournament.pk,
        army_code=code,
        order=order,
        actor=actor,
        now=request_received_at(request),
    )
    return _order_out(stored)


@router.put(
    "/tournaments/{tournament_id}/armies/{code}/order",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Enter an order on a General's behalf (judge)",
)
def order_enter(
    request: HttpRequest, tournament_id: int, code: str, payload: OrderIn
) -> dict[str, Any]:
    """R4: a paper order handed in on time; the record names the judge who entered it."""
    return _judge_order(request, tournament_id, code, _order_input(payload))


@router.delete(
    "/tournaments/{tournament_id}/armies/{code}/order",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Withdraw an army's order on a General's behalf (judge)",
)
def order_enter_withdraw(request: HttpRequest, tournament_id: int, code: str) -> dict[str, Any]:
    return _judge_order(request, tournament_id, code, OrderInput(kind=Order.Kind.WITHDRAW))
