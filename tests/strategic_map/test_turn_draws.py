"""R11 on the stored board: a turn's draws come from its committed seed and counted orders."""

from __future__ import annotations

import hashlib

import pytest
from django.db import transaction

from sl5r.rules.casefile import case_from_dict, case_verify
from sl5r.rules.draws import SeededDraws, orders_digest
from sl5r.rules.turn import Order as RulesOrder
from strategic_map.models import Campaign, Turn
from strategic_map.services import turn_open, turn_resolve, turn_seed_renew, turn_undo
from tests.strategic_map.test_turns import campaign_with, give, now

pytestmark = pytest.mark.django_db


def swap_turn() -> tuple[Campaign, Turn]:
    campaign = campaign_with({"crab-1": "crab-hida", "lion-1": "crab-hiruma"})
    turn = turn_open(campaign=campaign, number=1, now=now(), deadline=None)
    give(turn, campaign, "crab-1", path=["crab-hiruma"])
    give(turn, campaign, "lion-1", path=["crab-hida"])
    return campaign, turn


def resolve(turn: Turn) -> Turn:
    with transaction.atomic():
        resolved = turn_resolve(turn_id=turn.pk, now=now(), by="test")
    assert resolved is not None
    return resolved


def test_r11_a_turn_opens_with_a_seed_whose_commitment_is_its_sha256() -> None:
    _, turn = swap_turn()
    assert len(turn.draw_seed) == 64
    assert turn.commitment == hashlib.sha256(bytes.fromhex(turn.draw_seed)).hexdigest()


def test_r11_the_draw_follows_from_the_seed_and_the_orders_digest() -> None:
    _, turn = swap_turn()
    resolved = resolve(turn)
    (draw,) = resolved.result["draws"]  # type: ignore[index]
    assert draw["source"] == "committed seed"
    orders = [
        RulesOrder(army="crab-1", move=("crab-hiruma",)),
        RulesOrder(army="lion-1", move=("crab-hida",)),
    ]
    expected = SeededDraws(seed=turn.draw_seed, digest=orders_digest(orders)).choice(
        ["crab-hida", "crab-hiruma"]
    )
    assert draw["moving_from"] == expected
    case = resolved.case
    assert case is not None
    assert case["draw_seed"] == turn.draw_seed
    assert case["commitment"] == turn.commitment
    assert case["orders_digest"] == orders_digest(orders)
    assert case_verify(case_from_dict(case)) == []


def test_r11_undo_keeps_the_seed_and_resolving_again_draws_the_same() -> None:
    campaign, turn = swap_turn()
    first = resolve(turn)
    played = first.result
    with transaction.atomic():
        turn_undo(campaign=Campaign.objects.get(pk=campaign.pk), turn=first)
    reopened = Turn.objects.get(pk=turn.pk)
    assert reopened.draw_seed == turn.draw_seed
    assert resolve(reopened).result == played


def test_r11_renewing_the_seed_is_for_an_open_turn_only() -> None:
    _, turn = swap_turn()
    old = turn.commitment
    turn_seed_renew(turn=turn)
    assert turn.commitment != old
    resolved = resolve(turn)
    with pytest.raises(ValueError):
        turn_seed_renew(turn=resolved)
