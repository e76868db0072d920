"""The orders' group commit (referees/services/orders.py) queues each tournament alone.

A league's tournaments share one deadline (issue 33): while one tournament's batch of
orders is being stored, another tournament's order must not wait for it. Measured from
outside: ``orders_give``, the one call that stores a batch, is replaced by one that
records each batch and holds tournament A's until the test lets it go.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import pytest

from referees.kernel.tokens import PlayerClaim
from referees.services import OrderInput, orders

A, B = 9001, 9002
NOW = datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)
WAIT = 30.0  # seconds: only reached when the behaviour is broken


class Recorder:
    """Stands for ``orders_give``: each batch is recorded and answered; A's first waits."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.a_storing = threading.Event()
        self.release_a = threading.Event()
        self.guard = threading.Lock()

    def __call__(self, *, requests: Sequence[orders.ClaimedOrder]) -> None:
        with self.guard:
            self.batches.append([r.tournament_id for r in requests])
        if requests[0].tournament_id == A and not self.a_storing.is_set():
            self.a_storing.set()
            assert self.release_a.wait(WAIT), "the test never let A's batch go"
        for request in requests:
            request.answer = f"stored for {request.tournament_id}"  # type: ignore[assignment]


def give_in_thread(tournament_id: int, player_id: int) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []

    def give() -> None:
        answers.append(
            orders.order_give_claimed(
                tournament_id=tournament_id,
                claim=PlayerClaim(player_id=player_id, nonce="n"),
                order=OrderInput("hold"),
                now=NOW,
            )
        )

    thread = threading.Thread(target=give, daemon=True)
    thread.start()
    return thread, answers


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(orders, "orders_give", recorder)
    monkeypatch.setattr(orders, "_GROUPS", {})
    return recorder


def test_an_order_of_one_tournament_is_stored_while_another_tournaments_batch_is(
    recorder: Recorder,
) -> None:
    slow, slow_answers = give_in_thread(A, 1)
    assert recorder.a_storing.wait(WAIT)
    try:
        fast, fast_answers = give_in_thread(B, 2)
        fast.join(WAIT)
        assert not fast.is_alive(), "B's order waited for A's batch"
        assert fast_answers == ["stored for 9002"]
    finally:
        recorder.release_a.set()
    slow.join(WAIT)
    assert slow_answers == ["stored for 9001"]


def test_a_batch_never_holds_two_tournaments_orders(recorder: Recorder) -> None:
    first, _ = give_in_thread(A, 1)
    assert recorder.a_storing.wait(WAIT)
    # While A's first batch is being stored, more orders of A and of B arrive together.
    threads = [give_in_thread(t, n) for t, n in ((A, 3), (B, 4), (A, 5), (B, 6))]
    for thread, _answers in threads[1::2]:
        thread.join(WAIT)
    recorder.release_a.set()
    for thread, _answers in [*threads, (first, [])]:
        thread.join(WAIT)
        assert not thread.is_alive()
    assert [answers for _, answers in threads] == [
        ["stored for 9001"],
        ["stored for 9002"],
        ["stored for 9001"],
        ["stored for 9002"],
    ]
    assert all(len(set(batch)) == 1 for batch in recorder.batches), recorder.batches
    assert sum(len(batch) for batch in recorder.batches) == 5
