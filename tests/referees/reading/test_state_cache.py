"""The state of a tournament is built once per version and view (referees/reading/state.py,
issue 33).

At a deadline every page of a tournament asks for the new state at once; each distinct
view (the public's, the judges', each player's) is built once and the others read the kept
copy, with the clock as of their own request. A change moves the version, and the next
read builds the view again. What a reader may see (R1.1) is covered on the kept path by
tests/referees/api/test_state.py.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from referees import services
from referees.kernel.visibility import Viewer
from referees.reading import state as state_module
from referees.reading.state import tournament_state
from referees.reading.view import tournament_view
from referees.services import OrderInput
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

WAIT = 30.0  # seconds: only reached when the behaviour is broken


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each view built, as ``kind`` or ``player:<id>``."""
    made: list[str] = []
    real = tournament_view

    def counted(**kwargs: Any) -> dict[str, Any]:
        viewer = kwargs["viewer"]
        made.append(f"player:{viewer.player.pk}" if viewer.player else viewer.kind)
        return real(**kwargs)

    monkeypatch.setattr("referees.reading.state.tournament_view", counted)
    return made


def read(game: Game, viewer: Viewer, **at: float) -> dict[str, Any]:
    now = timezone.now() + timedelta(**at)
    return tournament_state(tournament=game.refresh(), viewer=viewer, now=now)


def test_each_view_is_built_once_per_version_whoever_asks(game16: Game, builds: list[str]) -> None:
    crab = Viewer.of_player(game16.player("crab"))
    lion = Viewer.of_player(game16.player("lion"))
    for viewer in (Viewer.public(), crab, Viewer.public(), lion, crab, Viewer.judge()):
        read(game16, viewer)
    read(game16, Viewer.judge("judge someone-else"))
    assert sorted(builds) == sorted(
        ["public", f"player:{crab.player.pk}", f"player:{lion.player.pk}", "judge"]  # type: ignore[union-attr]
    )


def test_a_change_is_read_at_once_by_a_view_kept_before_it(game16: Game, builds: list[str]) -> None:
    general = game16.player("crab")
    viewer = Viewer.of_player(general)
    before = read(game16, viewer)
    assert before["orders"] == []
    services.order_give(
        player=general, order=OrderInput("move", ("shinomen-mori",)), now=timezone.now()
    )
    after = read(game16, viewer)
    assert after["tournament"]["version"] == before["tournament"]["version"] + 1
    assert [o["army"] for o in after["orders"]] == [general.army.code]  # type: ignore[union-attr]
    assert builds == [f"player:{general.pk}"] * 2


def test_a_kept_view_runs_no_query_and_shows_the_clock_at_the_readers_time(
    game16: Game,
) -> None:
    tournament = game16.refresh()
    now = timezone.now()
    first = tournament_state(tournament=tournament, viewer=Viewer.public(), now=now)
    later = now + timedelta(seconds=30)
    with CaptureQueriesContext(connection) as queries:
        kept = tournament_state(tournament=tournament, viewer=Viewer.public(), now=later)
    assert queries.captured_queries == []
    assert kept["tournament"]["clock"]["server_time"] == later.isoformat()
    assert first["tournament"]["clock"]["remaining"] - kept["tournament"]["clock"][
        "remaining"
    ] == pytest.approx(30.0)
    assert {k: v for k, v in kept.items() if k != "tournament"} == {
        k: v for k, v in first.items() if k != "tournament"
    }


def test_a_view_is_kept_per_language(game16: Game, builds: list[str]) -> None:
    """Refusal reasons, flags and log lines in a view are written in the reader's language."""
    for language in ("en", "ru", "en", "ru"):
        with translation.override(language):
            read(game16, Viewer.judge())
    assert builds == ["judge", "judge"]


def test_readers_asking_at_once_for_a_view_not_kept_yet_wait_for_one_build(
    game16: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    tournament = game16.refresh()
    built = tournament_state(tournament=tournament, viewer=Viewer.public(), now=timezone.now())
    cache.clear()
    building = threading.Event()
    release = threading.Event()
    calls: list[int] = []

    def slow_build(**kwargs: Any) -> tuple[dict[str, Any], Any]:
        calls.append(1)
        building.set()
        assert release.wait(WAIT)
        return built, tournament

    monkeypatch.setattr(state_module, "_state_built", slow_build)
    misses: list[int] = []
    four_missed = threading.Event()

    class Counted:
        """The cache, counting the reads that find nothing."""

        def get(self, key: str) -> Any:
            found = cache.get(key)
            if found is None:
                misses.append(1)
                # The first reader misses twice (before and under the lock), each other once.
                if len(misses) >= 2 + 4:
                    four_missed.set()
            return found

        def set(self, key: str, value: Any, timeout: int) -> None:
            cache.set(key, value, timeout)

    monkeypatch.setattr(state_module, "cache", Counted())
    answers: list[dict[str, Any]] = []

    def reader() -> None:
        answers.append(
            tournament_state(tournament=tournament, viewer=Viewer.public(), now=timezone.now())
        )

    first = threading.Thread(target=reader)
    first.start()
    assert building.wait(WAIT)
    others = [threading.Thread(target=reader) for _ in range(4)]
    for thread in others:
        thread.start()
    # All four found nothing kept before the first build ended: without waiting for it,
    # each would build the view again.
    assert four_missed.wait(WAIT)
    release.set()
    for thread in [first, *others]:
        thread.join(WAIT)
    assert len(answers) == 5
    # The four that came while it was being built waited for it: still one build.
    assert calls == [1]
    assert {a["tournament"]["version"] for a in answers} == {built["tournament"]["version"]}


def test_every_view_of_a_version_is_cut_from_one_reading(game24: Game) -> None:
    """The first view of a version reads the tournament; every other view of it, whoever's,
    is cut from that reading without a query (issue 33: 10-12 queries a view before)."""
    tournament = game24.refresh()
    players = list(tournament.players.select_related("army"))
    now = timezone.now()
    with CaptureQueriesContext(connection) as first:
        tournament_state(tournament=tournament, viewer=Viewer.public(), now=now)
    assert first.captured_queries, "the first view reads the tournament"
    with CaptureQueriesContext(connection) as others:
        for player in players:
            state = tournament_state(
                tournament=tournament, viewer=Viewer.of_player(player), now=now
            )
            assert state["viewer"]["player"]["id"] == player.pk
    assert others.captured_queries == []


def test_a_row_saved_without_a_new_version_is_seen_at_the_next_read(game16: Game) -> None:
    """The admin site renames a player (no service, no version): his next view says it.
    A kept view is good for the campaign's version and its frame version, which every saved
    player, army, turn or campaign row moves on (referees.kernel.core.frame_row_saved)."""
    general = game16.player("crab")
    before = read(game16, Viewer.of_player(general))
    assert before["viewer"]["player"]["name"] == general.name
    general.name = "Hida Renamed"
    general.save()
    after = read(game16, Viewer.of_player(general))
    assert after["tournament"]["version"] == before["tournament"]["version"]
    assert after["viewer"]["player"]["name"] == "Hida Renamed"


# views_json closes the thread's old connections, as the server's threads need.
@pytest.mark.django_db(transaction=True)
def test_views_after_an_order_are_cut_from_the_reading_before_it_brought_up_to_date(
    game16: Game,
) -> None:
    """Issue 33: an order's event needs its General's view; when only orders changed since
    the kept reading, it is brought up to date with the open turn's orders (one query), not
    read again (eight)."""
    general = game16.player("crab")
    before = read(game16, Viewer.public())["tournament"]["version"]
    services.order_give(
        player=general, order=OrderInput("move", ("shinomen-mori",)), now=timezone.now()
    )
    view = state_module.View(kind="player", who=general.pk, nonce=general.token_nonce)
    with CaptureQueriesContext(connection) as queries:
        built = state_module.views_json(
            tournament_id=game16.id, views=[view], orders_only_since=before
        )
    done = built[view]
    assert done is not None
    state = json.loads(done.json)
    assert state["tournament"]["version"] == before + 1
    assert [o["army"] for o in state["orders"]] == [general.army.code]  # type: ignore[union-attr]
    # the tournament, its players, the open turn's orders
    assert len(queries.captured_queries) <= 3, [q["sql"][:80] for q in queries.captured_queries]


# views_json closes the thread's old connections, as the server's threads need.
@pytest.mark.django_db(transaction=True)
def test_a_reading_is_read_again_when_more_than_orders_changed_since(game16: Game) -> None:
    general = game16.player("crab")
    before = read(game16, Viewer.public())["tournament"]["version"]
    services.order_give(
        player=general, order=OrderInput("move", ("shinomen-mori",)), now=timezone.now()
    )
    services.announcement_post(
        tournament_id=game16.id, text="Tea", actor=game16.judge_actor, now=timezone.now()
    )
    view = state_module.View(kind="player", who=general.pk, nonce=general.token_nonce)
    # The hub says only orders since the version after the announcement: the kept reading,
    # from before both, must not be brought up to date with orders alone.
    built = state_module.views_json(
        tournament_id=game16.id, views=[view], orders_only_since=before + 2
    )
    done = built[view]
    assert done is not None
    assert json.loads(done.json)["announcements"][0]["text"] == "Tea"


def test_a_cache_that_does_not_answer_keeps_nothing_and_the_view_is_built(
    game16: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis restarting under the cluster: GET …/state still answers (it was a 500)."""

    class Down:
        def get(self, key: str) -> Any:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

        def set(self, key: str, value: Any, timeout: int) -> None:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(state_module, "cache", Down())
    state = read(game16, Viewer.public())
    assert state["viewer"]["kind"] == "public"
