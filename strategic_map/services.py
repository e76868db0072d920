"""Writes to the strategic map. Callers: views, management commands, tasks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from sl5r.rules.casefile import SEEDED, case_from_dict, case_to_dict, result_to_dict
from sl5r.rules.draws import SeededDraws, orders_digest, seed_new
from sl5r.rules.mapgraph import map_from_dict
from sl5r.rules.turn import RandomSource, TurnState, adjudicate_turn, order_check
from strategic_map.board import Board
from strategic_map.models import Army, Campaign, Map, Order, Turn
from strategic_map.selectors import (
    campaign_game_map,
    campaign_turn_state,
    order_to_rules,
    turn_current_orders,
    turn_state_as_seen_by,
)


def map_import(*, slug: str, data: Mapping[str, object]) -> Map:
    """Validate ``data`` as a map and store it under ``slug``; update the map if it exists.

    Raises ``django.core.exceptions.ValidationError`` for a bad slug and
    ``sl5r.rules.errors.MapError`` (one line naming the field and the problem) for a bad
    map; nothing is stored in either case.
    """
    # The model field's own checks: not blank, slug characters, maximum length.
    Map._meta.get_field("slug").clean(slug, None)
    map_from_dict(data)  # Raises MapError; the JSON itself is what is stored.
    # A JSON round trip stores plain lists and dicts, and fails here rather than in the
    # database on a value JSON cannot hold.
    stored = json.loads(json.dumps(dict(data)))
    raw_name = data.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else slug
    # Validation above runs outside any transaction; update_or_create is atomic itself.
    map_obj, _created = Map.objects.update_or_create(
        slug=slug, defaults={"name": name[:200], "data": stored}
    )
    return map_obj


# --- Campaigns ----------------------------------------------------------------------------
#
# These services change the board. They do not log or broadcast: the tournament services in
# ``referees`` call them inside their own transaction and record and announce what happened.

ORDER_ERROR_NOT_OPEN = "the turn is not open for orders"


class OrderRefused(ValueError):
    """An order that the turn would reject; ``code`` is the engine's reason code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def campaign_create(
    *,
    game_map: Map,
    clan_abilities: bool = True,
    excluded_clans: Sequence[str] = (),
    base_hand: int = 5,
) -> Campaign:
    """A new campaign on a copy of ``game_map``; every clan controls its home provinces."""
    graph = map_from_dict(game_map.data)
    campaign = Campaign(
        map=game_map,
        map_data=game_map.data,
        clan_abilities=clan_abilities,
        excluded_clans=sorted(set(excluded_clans)),
        base_hand=base_hand,
    )
    Board.of(campaign).replace(armies=(), control=graph.initial_control(excluded_clans))
    campaign.save(force_insert=True)
    return campaign


def campaign_settings_change(
    *,
    campaign: Campaign,
    clan_abilities: bool,
    base_hand: int,
    excluded_clans: Sequence[str],
) -> None:
    """Before the start: new settings; a change of the clans left out (R1 a) resets control.

    No army is on the board before the start, so control is what ``campaign_create`` gives:
    every clan in the game its home provinces. The caller holds the campaign row locked.
    """
    excluded = sorted(set(excluded_clans))
    fields = ["clan_abilities", "base_hand"]
    campaign.clan_abilities = clan_abilities
    campaign.base_hand = base_hand
    if excluded != sorted(campaign.excluded_clans):
        control = campaign_game_map(campaign).initial_control(excluded)
        campaign.excluded_clans = excluded
        Board.of(campaign).replace_control(control)
        fields += ["excluded_clans", "board"]
    campaign.save(update_fields=fields)


def army_create(*, campaign: Campaign, code: str, clan: str) -> Army:
    """A new army, not yet on the board (it is placed when its clan declares, R3)."""
    return Army.objects.create(campaign=campaign, code=code, clan=clan)


def board_place(
    *,
    campaign: Campaign,
    army: Army,
    province: str | None,
    destroyed_in_turn: int | None = None,
    destroyed_by: str | None = None,
    in_battle: bool = False,
) -> None:
    """Put ``army`` on the board (or off it, destroyed in a turn), as a judge or R3 says.

    The caller holds the campaign row locked (``select_for_update``) and saves it.
    """
    game_map = campaign_game_map(campaign)
    if province is not None and province not in game_map.provinces:
        raise ValueError(f'there is no province "{province}"')
    if province is not None and province in game_map.blocked_provinces(campaign.excluded_clans):
        raise ValueError(f"{game_map.provinces[province].name} is impassable")
    board = Board.of(campaign)
    if province is None:
        board.destroy(
            army.code,
            turn=destroyed_in_turn or 1,
            by="winner" if destroyed_by == "winner" else "loss",
        )
    else:
        board.place(army.code, province=province, in_battle=in_battle)


def board_set_control(*, campaign: Campaign, province: str, clan: str | None) -> None:
    """Set a province's controller by hand (a judge's correction). The caller saves."""
    game_map = campaign_game_map(campaign)
    if province not in game_map.provinces:
        raise ValueError(f'there is no province "{province}"')
    if clan is not None and clan in campaign.excluded_clans:
        raise ValueError(f'clan "{clan}" is not in this game')
    Board.of(campaign).set_control(province, clan)


def turn_open(*, campaign: Campaign, number: int, now: datetime, deadline: datetime | None) -> Turn:
    """Open a turn with its secret draw seed fixed now (R11): only its commitment is shown."""
    return Turn.objects.create(
        campaign=campaign, number=number, opened_at=now, deadline=deadline, draw_seed=seed_new()
    )


def turn_seed_renew(*, turn: Turn) -> str:
    """Give an open turn a new draw seed (a judge's deliberate re-draw, R11); the old seed.

    The caller logs it: the new commitment replaces the published one.
    """
    if turn.status != Turn.Status.OPEN:
        raise ValueError("only an open turn's draws can be renewed")
    old = turn.draw_seed
    turn.draw_seed = seed_new()
    turn.save(update_fields=["draw_seed"])
    return old


def order_checked(
    *,
    turn: Turn,
    army: Army,
    kind: str,
    path: Sequence[str] = (),
    reform: str = "",
    claim: bool = True,
    on_swap: str = Order.OnSwap.ADVANCE,
    author: str,
    by_judge: bool = False,
    now: datetime,
    others_hidden: bool = False,
    state: TurnState | None = None,
) -> Order:
    """An order for the open turn, checked as the turn would check it (R4), not yet saved:
    the caller saves it, alone or with others (a group commit).

    Raises ``OrderRefused`` with the engine's reason when the order could not be carried
    out as things stand. The caller checks the deadline.

    ``others_hidden``: the one giving the order may not see the map (R1.1), so it is
    checked as if his army were alone on the board and every province he cannot see were
    his clan's; a refusal must not tell him where other armies are (a Unicorn's
    two-province move through a held province, R5.4) or who holds a castle (a reform, R9).
    The turn still applies every rule at the deadline.

    ``state``: the turn's input (``campaign_turn_state``) when the caller holds it already.
    """
    if turn.status != Turn.Status.OPEN:
        raise OrderRefused("not_open", ORDER_ERROR_NOT_OPEN)
    order = Order(
        turn=turn,
        army=army,
        kind=kind,
        path=list(path) if kind == Order.Kind.MOVE else [],
        reform=reform if kind == Order.Kind.REFORM else "",
        claim=claim,
        on_swap=on_swap,
        created_at=now,
        author=author,
        by_judge=by_judge,
    )
    if kind != Order.Kind.WITHDRAW:
        if state is None:
            state = campaign_turn_state(turn.campaign, turn=turn.number)
        if not any(a.id == army.code for a in state.armies):
            raise OrderRefused("not_placed", "the army is not on the board yet")
        if others_hidden:
            state = turn_state_as_seen_by(state, army.code)
        rejection = order_check(state, order_to_rules(order, army.code))
        if rejection is not None:
            raise OrderRefused(rejection.code, rejection.text)
    return order


def turn_resolve(
    *, turn_id: int, now: datetime, by: str, rng: RandomSource | None = None
) -> Turn | None:
    """Resolve an open turn: carry out its orders and store the new board (R4-R9).

    The draws come from the turn's committed seed and the digest of the orders that count
    (R11, ``sl5r.rules.draws``), so resolving the same orders again draws the same; ``rng``
    replaces that source (tests, benchmarks).

    Exactly once: the turn moves from OPEN to RESOLVING in a conditional update, so when two
    callers race (two clocks, or a clock and a judge) the second finds it no longer open and
    gets ``None``. Must run inside ``transaction.atomic()``; the caller decides when the turn
    is due. The number of queries does not depend on the number of armies.
    """
    if not Turn.objects.filter(pk=turn_id, status=Turn.Status.OPEN).update(
        status=Turn.Status.RESOLVING
    ):
        return None
    turn = Turn.objects.get(pk=turn_id)
    campaign = Campaign.objects.select_for_update().get(pk=turn.campaign_id)
    turn.campaign = campaign
    armies = list(Army.objects.filter(campaign=campaign).order_by("id"))
    state = campaign_turn_state(campaign, turn=turn.number, armies=armies)
    code_of = {a.pk: a.code for a in armies}
    orders = [
        order_to_rules(order, code_of[aid])
        for aid, order in sorted(turn_current_orders(turn).items())
    ]
    placed = {a.id for a in state.armies}
    orders = [o for o in orders if o.army in placed]
    if not turn.draw_seed:  # a turn opened before seeds were kept
        turn.draw_seed = seed_new()
    if rng is None:
        result = adjudicate_turn(
            state,
            orders,
            rng=SeededDraws(seed=turn.draw_seed, digest=orders_digest(orders)),
            rng_label=SEEDED,
        )
    else:
        result = adjudicate_turn(state, orders, rng=rng, rng_label="system")

    board = Board.of(campaign)
    board.replace(armies=result.armies, control=result.control)
    # The version is not moved here: the tournament's unit of work (referees.kernel.core) counts
    # the resolution and its battle tables as one change.
    board.save()

    turn.case = case_to_dict(
        state=state,
        orders=orders,
        draws={d.key: d.moving_from for d in result.draws if d.method.value != "scorpion"},
        map_ref=campaign.map_data,
        description=f"Turn {turn.number} as played",
        draw_seed=turn.draw_seed if rng is None else None,
    )
    turn.result = result_to_dict(result)
    turn.status = Turn.Status.RESOLVED
    turn.resolved_at = now
    turn.resolved_by = by
    turn.save(update_fields=["case", "result", "status", "resolved_at", "resolved_by", "draw_seed"])
    return turn


def turn_undo(*, campaign: Campaign, turn: Turn) -> None:
    """Put the board back as it was before ``turn`` was resolved and reopen it.

    ``turn`` must be the last resolved turn; any turn opened after it is marked undone (its
    orders stay on record). The caller holds the campaign locked, inside a transaction.
    The turn keeps its draw seed (R11): resolving it again with the same orders draws the same.
    """
    if turn.status != Turn.Status.RESOLVED or turn.case is None:
        raise ValueError("only a resolved turn can be undone")
    Turn.objects.filter(campaign=campaign, number__gt=turn.number).exclude(
        status=Turn.Status.UNDONE
    ).update(status=Turn.Status.UNDONE)
    case = case_from_dict(turn.case)
    board = Board.of(campaign)
    board.replace(armies=case.state.armies, control=case.state.control)
    board.save()
    turn.status = Turn.Status.OPEN
    turn.case = None
    turn.result = None
    turn.resolved_at = None
    turn.resolved_by = ""
    turn.save(update_fields=["status", "case", "result", "resolved_at", "resolved_by"])
