"""Draws anyone can verify (R11): a committed seed, the orders' digest, and SHA-256.

When a turn opens the server fixes a secret 32-byte seed and publishes ``seed_commitment``
(the SHA-256 of the seed). At the deadline the draws are made from the seed *and* a digest
of the orders that count, so nobody (the server included) knows a draw before the last
order is in, and the server cannot pick a seed after seeing the orders. The seed is revealed
after the turn, and docs/adjudication.md ("Verifying a turn's draws") gives the few lines of
Python that recompute every draw. Change anything here and every verification of a played
turn breaks: the scheme is a published format, not an implementation detail.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence

from .errors import RulesInputError
from .turn import Order

SEED_BYTES = 32
TURN_LABEL = "turn"


def seed_new() -> str:
    """A fresh secret seed, as 64 lowercase hex digits."""
    return secrets.token_hex(SEED_BYTES)


def seed_bytes(seed: str, place: str = "draw_seed") -> bytes:
    """The seed's bytes; ``RulesInputError`` naming ``place`` unless it is 64 hex digits."""
    try:
        raw = bytes.fromhex(seed)
    except (TypeError, ValueError):
        raw = b""
    if len(raw) != SEED_BYTES:
        raise RulesInputError(place, f"must be {2 * SEED_BYTES} hex digits, not {seed!r}")
    return raw


def seed_commitment(seed: str) -> str:
    """What is published while the seed is secret: SHA-256 of the seed's 32 bytes, in hex."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


def _json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def orders_canonical(orders: Sequence[Order]) -> bytes:
    """The orders as canonical JSON: one object per order with every field, sorted by army.

    Sorted, so that the order in which they were given or stored does not matter.
    """
    rows = [
        {
            "army": o.army,
            "move": list(o.move),
            "reform": o.reform,
            "claim": o.claim,
            "on_swap": o.on_swap,
            "late": o.late,
        }
        for o in sorted(orders, key=lambda o: o.army)
    ]
    return _json(rows)


def orders_digest(orders: Sequence[Order]) -> str:
    """SHA-256 of ``orders_canonical``, in hex."""
    return hashlib.sha256(orders_canonical(orders)).hexdigest()


def draw_index(seed: bytes, digest: bytes, label: str, counter: int, pool: Sequence[str]) -> int:
    """The index in the sorted ``pool`` that draw number ``counter`` (from 0) picks."""
    message = seed + digest + _json([label, counter, list(pool)])
    return int.from_bytes(hashlib.sha256(message).digest(), "big") % len(pool)


class SeededDraws:
    """A ``RandomSource`` whose draws follow from the seed and the orders' digest alone.

    The k-th ``choice(seq)`` sorts ``seq`` and picks
    ``int(sha256(seed ‖ digest ‖ json([label, k, sorted(seq)]))) mod len(seq)``.
    """

    __slots__ = ("count", "digest", "label", "seed")

    def __init__(self, *, seed: str, digest: str, label: str = TURN_LABEL) -> None:
        self.seed = seed_bytes(seed)
        self.digest = bytes.fromhex(digest)
        self.label = label
        self.count = 0

    def choice(self, seq: Sequence[str], /) -> str:
        pool = sorted(seq)
        if not pool:
            raise IndexError("cannot choose from an empty sequence")
        index = draw_index(self.seed, self.digest, self.label, self.count, pool)
        self.count += 1
        return pool[index]
