"""A tournament in play for the abuse tests, built on the referees' and battles' test games.

``scene`` is 20 players on the bundled map (``MIXED_LINEUP``, R1 b: the Crab, Crane, Phoenix
and Shadowlands have two Generals and a Daimyo, every other clan two Generals and no Daimyo),
turn 1 played with ``unicorn-2`` marching into ``lion-akodo``, where it met ``lion-1``: a
battle table is open there (``meeting``) and turn 2 is open. Everyone's bearer credentials
are at hand.

``served_site`` is a real ``manage.py serve`` on the test database, started once per module
and shared by its tests (they commit their data: ``transaction=True``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from battles.models import Battle
from referees.kernel.access import judge_key_create
from tests.abuse.served import Served
from tests.battles.conftest import meet
from tests.referees import conftest as referee_fixtures
from tests.referees.conftest import MIXED_LINEUP, MIXED_PLAYERS, Game

# The referees' fixtures, by assignment (an import would read as redefined by their users).
_clear_cache = referee_fixtures._clear_cache
api = referee_fixtures.api
judge_user = referee_fixtures.judge_user
make_game = referee_fixtures.make_game
rokugan = referee_fixtures.rokugan


@dataclass
class Scene:
    game: Game
    judge_key: str
    battle: Battle

    @property
    def id(self) -> int:
        return self.game.id

    def token_of(self, army: str) -> str:
        """The join token of the General of ``army``."""
        player = next(p for p in self.game.players if p.army is not None and p.army.code == army)
        return self.game.token(player)


@pytest.fixture
def scene(make_game: Callable[..., Game]) -> Scene:
    game = make_game(MIXED_PLAYERS, lineup=MIXED_LINEUP)
    battle = meet(game)  # unicorn-2 into lion-akodo: turn 1 played, a table opens
    key = judge_key_create(user=game.judge, label="abuse tests").key
    return Scene(game=game, judge_key=key, battle=battle)


@pytest.fixture(scope="module")
def _served_sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for site in started:
        site.stop()


@pytest.fixture
def served_site(
    _served_sites: list[Served],
    subprocess_database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Served:
    """The module's server (started on first use, again if it died), on this database."""
    if _served_sites and _served_sites[-1].alive():
        site = _served_sites[-1]
        if site.database_url == subprocess_database_url:
            return site
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "SECRET_KEY"}}
    env.update(
        DJANGO_SETTINGS_MODULE="sl5r.settings",
        DATABASE_URL=subprocess_database_url,
        SL5R_CLOCK="inprocess",  # with --no-clock: nothing resolves turns but the tests
        PYTHONUNBUFFERED="1",
    )
    log: Path = tmp_path_factory.mktemp("serve") / "serve.log"
    site = Served(env, log, subprocess_database_url)
    _served_sites.append(site)
    return site
