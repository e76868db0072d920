"""R11: draws anyone can verify, from a committed seed and the orders' digest."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from sl5r.rules.draws import (
    SeededDraws,
    orders_canonical,
    orders_digest,
    seed_commitment,
    seed_new,
)
from sl5r.rules.errors import RulesInputError
from sl5r.rules.turn import Order

SEED = "00" * 31 + "07"
ORDERS = [
    Order(army="lion-1", move=("a",)),
    Order(army="crab-1", move=("b",), on_swap="stay"),
    Order(army="crane-1", claim=False),
]

provinces = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
orders_lists = st.lists(
    st.builds(
        Order,
        army=st.text(alphabet="abcxyz-123", min_size=1, max_size=6),
        move=st.lists(provinces, max_size=2).map(tuple),
        claim=st.booleans(),
        on_swap=st.sampled_from(["stay", "advance"]),
        late=st.booleans(),
    ),
    max_size=6,
    unique_by=lambda o: o.army,
)


def test_r11_commitment_is_the_sha256_of_the_seed_bytes() -> None:
    assert seed_commitment(SEED) == hashlib.sha256(bytes.fromhex(SEED)).hexdigest()
    assert len(seed_new()) == 64 and seed_new() != seed_new()


def test_r11_a_seed_that_is_not_64_hex_digits_is_refused_by_name() -> None:
    for bad in ("", "xyz", "00" * 31):
        try:
            seed_commitment(bad)
        except RulesInputError as error:
            assert error.place == "draw_seed"
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_r11_orders_digest_is_sha256_of_canonical_json_sorted_by_army() -> None:
    canonical = orders_canonical(ORDERS)
    rows = json.loads(canonical)
    assert [r["army"] for r in rows] == ["crab-1", "crane-1", "lion-1"]
    assert b" " not in canonical
    assert rows[0] == {
        "army": "crab-1",
        "claim": True,
        "late": False,
        "move": ["b"],
        "on_swap": "stay",
        "reform": None,
    }
    assert canonical == json.dumps(rows, sort_keys=True, separators=(",", ":")).encode()
    assert orders_digest(ORDERS) == hashlib.sha256(canonical).hexdigest()


def test_r11_orders_digest_does_not_depend_on_the_order_of_the_orders() -> None:
    assert orders_digest(ORDERS) == orders_digest(list(reversed(ORDERS)))
    changed = [ORDERS[0], ORDERS[1], Order(army="crane-1", claim=True)]
    assert orders_digest(changed) != orders_digest(ORDERS)


def test_r11_seeded_draws_follow_the_documented_formula() -> None:
    digest = orders_digest(ORDERS)
    draws = SeededDraws(seed=SEED, digest=digest)
    picks = [draws.choice(["b", "a"]) for _ in range(5)]
    expected: list[str] = []
    for k in range(5):
        message = (
            bytes.fromhex(SEED)
            + bytes.fromhex(digest)
            + json.dumps(["turn", k, ["a", "b"]], separators=(",", ":")).encode()
        )
        expected.append(["a", "b"][int(hashlib.sha256(message).hexdigest(), 16) % 2])
    assert picks == expected


def test_r11_seeded_draws_are_deterministic_and_ignore_the_order_of_the_choices() -> None:
    digest = orders_digest(ORDERS)
    one = SeededDraws(seed=SEED, digest=digest)
    two = SeededDraws(seed=SEED, digest=digest)
    assert [one.choice(["a", "b", "c"]) for _ in range(20)] == [
        two.choice(["c", "a", "b"]) for _ in range(20)
    ]


def test_r11_different_seeds_give_draws_spread_over_the_choices() -> None:
    digest = orders_digest(ORDERS)
    firsts = Counter(
        SeededDraws(seed=f"{n:064x}", digest=digest).choice(["a", "b", "c", "d"])
        for n in range(400)
    )
    assert set(firsts) == {"a", "b", "c", "d"}
    assert all(60 <= count <= 140 for count in firsts.values()), firsts


def test_r11_different_orders_change_the_draws_for_the_same_seed() -> None:
    runs = {
        tuple(
            SeededDraws(seed=SEED, digest=orders_digest([Order(army=f"a{n}")])).choice(["a", "b"])
            for _ in range(16)
        )
        for n in range(8)
    }
    assert len(runs) > 1


@given(
    seed=st.binary(min_size=32, max_size=32).map(bytes.hex),
    orders=orders_lists,
    choices=st.lists(provinces, min_size=1, max_size=5, unique=True),
    shuffled=st.randoms(use_true_random=False),
)
def test_r11_same_seed_and_orders_always_give_the_same_draws(
    seed: str, orders: list[Order], choices: list[str], shuffled: object
) -> None:
    other = list(orders)
    shuffled.shuffle(other)  # type: ignore[attr-defined]
    a = SeededDraws(seed=seed, digest=orders_digest(orders))
    b = SeededDraws(seed=seed, digest=orders_digest(other))
    first = [a.choice(choices) for _ in range(3)]
    assert first == [b.choice(list(reversed(choices))) for _ in range(3)]
    assert all(pick in choices for pick in first)
