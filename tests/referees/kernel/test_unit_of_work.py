"""One operation is one unit of work: one version, one live event, a known number of queries.

A client that watches a tournament keeps the newest version it has seen and fetches the
state again when versions skip (referees/live/events.py). An operation that counted itself
several times, or broadcast several events for one change, would have every watcher fetch
in between and see a half-made state. So an order and a turn resolution (with the battle
tables it opens) each grow ``Campaign.version`` by exactly one and, after the commit, send
exactly one event to the tournament's group (and one to its public group when the public
may see the change), carrying that version.

Measured from outside only (tests/event_capture.py): the stored version, the messages the
channel layer delivered, the queries run; never which service function bumped or sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from battles.models import OPEN_STATUSES, Battle
from referees import services
from referees.kernel.tokens import token_claim
from referees.live.events import EVENT_TYPE, VERSION_TYPE
from referees.services import OrderInput
from tests.event_capture import IN_MEMORY_LAYERS, Effects, OnCommitCapture, effects_of
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

# lion-1 holds lion-akodo (a Lion castle); unicorn-2 starts next door in unicorn-shinjo.
MEETING_PROVINCE = "lion-akodo"

# Today's counts, pinned as upper bounds: a change that adds a query must say why here. Each
# includes the SAVEPOINT and RELEASE of the operation's atomic block inside the test's
# transaction (tests/event_capture.py).
# An order, once its tournament's frame is read (referees/services/order_frame.py): lock
# the tournament, insert the order and its log line, bump the version — 4 of its own.
ORDER_QUERIES = 2 + 4
# The first order of a frame (after a change other than an order) reads it too: the whole
# campaign, its armies, its players, the open turn and the turn's orders.
FIRST_ORDER_QUERIES = 2 + 4 + 5
# Turn 1 of ``game16`` resolved with one order only, the judge's paper move of unicorn-2
# into lion-akodo: no draw, one meeting (Lion and Unicorn), one battle table opened, turn 2
# opened. By the clock, one more: the unlocked look at the tournament before its lock.
RESOLVE_NOW_QUERIES = 22
CLOCK_RESOLVE_QUERIES = 23


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    """Events go to a fresh in-memory layer, where the test listens (Redis or not)."""
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYERS


def one_order(game: Game) -> Callable[[], object]:
    """crab-1 (in crab-hida) is ordered to move to shinomen-mori by his General."""
    general = game.player("crab")  # read before, so that the count is the order's own

    def give() -> object:
        return services.order_give(
            player=general, order=OrderInput("move", ("shinomen-mori",)), now=timezone.now()
        )

    return give


def set_up_a_meeting(game: Game) -> None:
    """The judge enters unicorn-2's move into lion-akodo: resolving turn 1 opens a table."""
    services.order_enter(
        tournament_id=game.id,
        army_code="unicorn-2",
        order=OrderInput(kind="move", path=(MEETING_PROVINCE,)),
        actor=game.judge_actor,
        now=timezone.now(),
    )


def resolution(game: Game, by: str) -> Callable[[], object]:
    """Turn 1 resolved by the judge ("judge": resolve now) or at its deadline ("clock")."""
    if by == "judge":
        actor = game.judge_actor
        return lambda: services.clock_resolve_now(
            tournament_id=game.id, actor=actor, now=timezone.now()
        )
    deadline = game.refresh().deadline
    assert deadline is not None
    return lambda: services.clock_tick(tournament_id=game.id, now=deadline)


def assert_a_table_opened(game: Game) -> None:
    opened = Battle.objects.filter(
        tournament_id=game.id,
        province=MEETING_PROVINCE,
        opened_turn=1,
        status__in=OPEN_STATUSES,
    )
    assert opened.exists(), "the resolution was to open a battle table in lion-akodo"


def assert_one_version_and_one_event(effects: Effects, *, public: bool) -> None:
    """One version more, and the events of it: one per group that hears of such changes."""
    why = effects.describe()
    bumps, version = effects.version_bumps, effects.version_after
    assert bumps == 1, why
    main = [m["version"] for m in effects.delivered.main]
    assert main == [version], why
    # The public group hears of every version: an event (with the public state) when the
    # public sees the change, else a bare version note that no socket is sent (issue 42).
    public_heard = [(m["type"], m["version"]) for m in effects.delivered.public]
    assert public_heard == [(EVENT_TYPE if public else VERSION_TYPE, version)], why
    assert all("state_json" not in m for m in effects.delivered.public if not public), why


def test_one_order_bumps_the_version_once_and_sends_one_event(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    effects = effects_of(
        tournament_id=game16.id,
        operation=one_order(game16),
        on_commit=django_capture_on_commit_callbacks,
    )
    # An order changes nothing the public sees: the public group hears only its version
    # (referees/live/events.py, NOT_PUBLIC_KINDS).
    assert_one_version_and_one_event(effects, public=False)


def another_order_given(game: Game, on_commit: OnCommitCapture) -> None:
    """Lion's General moves first, and commits: the frame of turn 1 is read, as by any
    first order, and knows the turn's orders up to his."""
    with on_commit(execute=True):
        services.order_give(
            player=game.player("lion"),
            order=OrderInput("move", ("lion-ikoma",)),
            now=timezone.now(),
        )


def test_an_order_runs_4_statements_of_its_own_once_the_frame_is_read(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    another_order_given(game16, django_capture_on_commit_callbacks)
    effects = effects_of(
        tournament_id=game16.id,
        operation=one_order(game16),
        on_commit=django_capture_on_commit_callbacks,
    )
    assert len(effects.queries) <= ORDER_QUERIES, effects.describe()
    assert_one_version_and_one_event(effects, public=False)


def test_an_order_by_join_link_runs_4_statements_of_its_own_once_the_frame_is_read(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    """The API's way: the link's claim is checked against the frame, not read again."""
    another_order_given(game16, django_capture_on_commit_callbacks)
    general = game16.player("crab")
    claim = token_claim(game16.token(general))
    assert claim is not None

    def give() -> object:
        return services.order_give_claimed(
            tournament_id=game16.id,
            claim=claim,
            order=OrderInput("move", ("shinomen-mori",)),
            now=timezone.now(),
        )

    effects = effects_of(
        tournament_id=game16.id, operation=give, on_commit=django_capture_on_commit_callbacks
    )
    assert len(effects.queries) <= ORDER_QUERIES, effects.describe()
    assert_one_version_and_one_event(effects, public=False)


def test_the_first_order_of_a_frame_reads_it_once(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    effects = effects_of(
        tournament_id=game16.id,
        operation=one_order(game16),
        on_commit=django_capture_on_commit_callbacks,
    )
    assert len(effects.queries) <= FIRST_ORDER_QUERIES, effects.describe()


@pytest.mark.parametrize("by", ["judge", "clock"])
def test_turn_resolution_with_battle_tables_is_one_version_and_one_event(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture, by: str
) -> None:
    set_up_a_meeting(game16)
    effects = effects_of(
        tournament_id=game16.id,
        operation=resolution(game16, by),
        on_commit=django_capture_on_commit_callbacks,
    )
    assert_a_table_opened(game16)
    # The board, the new turn and the new table are one change: watchers never see the
    # board moved without its table, or the table before the board.
    assert_one_version_and_one_event(effects, public=True)


@pytest.mark.parametrize(
    ("by", "most"), [("judge", RESOLVE_NOW_QUERIES), ("clock", CLOCK_RESOLVE_QUERIES)]
)
def test_turn_resolution_with_battle_tables_runs_at_most_a_pinned_number_of_queries(
    game16: Game, django_capture_on_commit_callbacks: OnCommitCapture, by: str, most: int
) -> None:
    set_up_a_meeting(game16)
    effects = effects_of(
        tournament_id=game16.id,
        operation=resolution(game16, by),
        on_commit=django_capture_on_commit_callbacks,
    )
    assert_a_table_opened(game16)
    count = len(effects.queries)
    assert count <= most, effects.describe()
