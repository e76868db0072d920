"""The tournament's state as a viewer may see it: ``GET …/state``, the pages and the events.

It sits above ``battles`` in the stack (architecture.md): the tournament's own view comes
from ``referees.reading.view`` (who sees what: ``referees.kernel.visibility``, below the
battles), and a player's battle table from ``battles.selectors``; this module puts them
together.

Built once per version and view (issue 33). A league's deadline sends thousands of pages
for the new state at once, but a tournament has only a handful of distinct views at a
version: the public's, the judges', and each player's (R1.1: a General's fogged map, a
Daimyo's clan). Each is built once and kept in Django's cache (in-process in the embedded
setup, Redis in the cluster, so every process shares it) under the tournament, the version
it shows, the view, and the language and time zone it is written in; every other reader
of that version gets the kept copy with the clock brought to its own ``now``. A view is
keyed by whose it is, never by what it happens to contain, so no reader is ever handed
another's view (the role-isolation tests read through this path). Every change the state
shows moves the version (``referees.kernel.core.announce``), so a new version is a new key and
nothing needs deleting; entries expire on their own. A few things a view shows change with
time alone and not with the version — a closed call drops off after ten minutes, a judge's
missed-deadline flag lists the late refusals written after it — so entries live
``STATE_TTL`` seconds (judges' ``STATE_TTL_JUDGE``) and are then built again.

While one thread builds a view, the others of the process asking for the same one wait for
it rather than build it again (``_building``).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from django.utils import timezone, translation

from battles.selectors import armies_current_battles
from referees.kernel.access import user_judges
from referees.kernel.deadlines import tournament_clock
from referees.kernel.visibility import Viewer
from referees.models import Player, Tournament
from referees.reading.view import TournamentReading, tournament_reading, tournament_view
from referees.services.checkin import CHECK_IN_PHASES, tournament_checkin
from strategic_map.models import Campaign
from strategic_map.selectors import turn_current_orders

log = logging.getLogger(__name__)

# A turn resolved while the state was being read is seen by its version; the state is read
# again a few times at most.
STATE_READS = 3

# How long a built view is kept (seconds). Bounded so that what ages without a new version
# (a closed call, see the module docstring) is seen within this long; a deadline's readers
# all come within a few seconds of it.
STATE_TTL = 60
STATE_TTL_JUDGE = 5

_building_guard = threading.Lock()
_building: dict[str, threading.Lock] = {}


def view_key(*, tournament: Tournament, viewer: Viewer) -> str:
    """The cache key of ``viewer``'s view of the tournament as ``tournament`` was read (its
    ``generation``): whose view it is (public, judges, one player), in the current language
    and time zone."""
    if viewer.kind == "player":
        assert viewer.player is not None
        whose = f"player:{viewer.player.pk}"
    else:
        whose = viewer.kind
    language = translation.get_language() or "-"
    zone = timezone.get_current_timezone_name()
    made, version, frame = generation(tournament)
    return f"state:{tournament.pk}:{made}:{version}.{frame}:{whose}:{language}:{zone}"


def generation(tournament: Tournament) -> tuple[int, int, int]:
    """What a kept view or reading of the tournament is good for: its campaign's creation
    time (a database made again, a test run or a site reset, numbers its tournaments and
    versions from 1 again, and Redis may still hold the old ones' views), its version (every
    change a service announces) and its frame version (every player, army, turn or campaign
    row saved, announced or not: a player registered in set-up, the admin site)."""
    campaign = tournament.campaign
    made = int(campaign.created_at.timestamp() * 1_000_000)
    return made, int(campaign.version), int(campaign.frame_version)


def tournament_state(*, tournament: Tournament, viewer: Viewer, now: datetime) -> dict[str, Any]:
    """Everything ``viewer`` may see of the tournament now, as plain JSON-ready data.

    From the cache when this view of the tournament's current version (as ``tournament``
    was read) has been built already, with the clock as of ``now``; else built, kept and
    returned.
    """
    kept = tournament_state_kept(tournament=tournament, viewer=viewer, now=now)
    if kept is not None:
        return kept
    key = view_key(tournament=tournament, viewer=viewer)
    with _build_lock(key):
        state = _kept(key)
        if state is None:
            state, read = _state_built(tournament=tournament, viewer=viewer, now=now)
            ttl = STATE_TTL_JUDGE if viewer.kind == "judge" else STATE_TTL
            # Kept under the version it shows: read again, it may be newer than asked.
            _keep(view_key(tournament=read, viewer=viewer), state, ttl)
            return state
    return _clock_brought(state, tournament, now)


def tournament_state_kept(
    *, tournament: Tournament, viewer: Viewer, now: datetime
) -> dict[str, Any] | None:
    """``viewer``'s view of the tournament's version when it is kept already, with the
    clock as of ``now``; None when it has to be built (``tournament_state``). Needs only the
    tournament's row and its campaign's creation time and versions, no query."""
    state = _kept(view_key(tournament=tournament, viewer=viewer))
    return None if state is None else _clock_brought(state, tournament, now)


def _clock_brought(state: dict[str, Any], tournament: Tournament, now: datetime) -> dict[str, Any]:
    if state["tournament"]["version"] == tournament.campaign.version:
        # Same version, same clock settings: only the time differs.
        state["tournament"]["clock"] = tournament_clock(tournament, now)
    return state


def _kept(key: str) -> dict[str, Any] | None:
    """The view kept under ``key``, if any. A cache that does not answer (Redis restarting)
    keeps nothing: the view is built, as before there was a cache."""
    try:
        found: dict[str, Any] | None = cache.get(key)
    except Exception:
        log.warning("the state cache did not answer; building the view", exc_info=True)
        return None
    return found


def _keep(key: str, state: dict[str, Any], ttl: int) -> None:
    try:
        cache.set(key, state, ttl)
    except Exception:
        log.warning("the state cache did not answer; the view is not kept", exc_info=True)


@contextmanager
def _build_lock(key: str) -> Iterator[None]:
    """The process-wide lock of one key while its view is built; forgotten after."""
    with _building_guard:
        lock = _building.setdefault(key, threading.Lock())
    with lock:
        yield
    with _building_guard:
        # Threads still waiting hold this lock already; a newcomer making a new one finds
        # the view in the cache anyway.
        if _building.get(key) is lock:
            del _building[key]


@dataclass(frozen=True)
class _Reading:
    """A version's reading and its tables, shared by every view built from it."""

    key: tuple[int, tuple[int, int, int]]  # the tournament, its generation
    tournament: TournamentReading
    battles: dict[str, dict[str, Any]]
    read_at: float  # time.monotonic(): what ages without a version (calls) ages here too

    def serves(self, key: tuple[int, tuple[int, int, int]]) -> bool:
        return self.key == key and time.monotonic() - self.read_at < STATE_TTL


_readings_guard = threading.Lock()
_readings: dict[int, _Reading] = {}  # the newest reading of each tournament in this process
_reading_locks: dict[int, threading.Lock] = {}


def _reading_of(
    tournament: Tournament, now: datetime, *, orders_only_since: int | None = None
) -> _Reading:
    """The reading of the tournament's version (as ``tournament`` was read), made once per
    process: a deadline's views are all cut from one.

    Read in several queries; a change committed meanwhile would mix two versions, so the
    campaign's version is checked at the end and the whole read again (a few times at most)
    when it moved.
    """
    key = (tournament.pk, generation(tournament))
    kept = _readings.get(tournament.pk)
    if kept is not None and kept.serves(key):
        return kept
    if kept is not None and orders_only_since is not None:
        moved = _orders_moved_on(kept, key, orders_only_since, tournament)
        if moved is not None:
            _readings[tournament.pk] = moved
            return moved
    with _readings_guard:
        lock = _reading_locks.setdefault(tournament.pk, threading.Lock())
    with lock:
        kept = _readings.get(tournament.pk)
        if kept is not None and kept.serves(key):
            return kept
        for _ in range(STATE_READS):
            reading = _Reading(
                key=(tournament.pk, generation(tournament)),
                tournament=tournament_reading(tournament=tournament, now=now),
                battles=armies_current_battles(tournament=tournament),
                read_at=time.monotonic(),
            )
            current = (
                Campaign.objects.filter(pk=tournament.campaign_id)
                .values_list("version", "frame_version")
                .first()
            )
            if current == generation(tournament)[1:]:
                break
            tournament = Tournament.objects.select_related("campaign").get(pk=tournament.pk)
        kept = _readings.get(tournament.pk)
        # Kept unless a newer version of the same campaign is kept already.
        mine, theirs = reading.key[1], kept.key[1] if kept is not None else None
        if theirs is None or theirs[0] != mine[0] or theirs[1:] <= mine[1:]:
            _readings[tournament.pk] = reading
        return reading


def _orders_moved_on(
    kept: _Reading, key: tuple[int, tuple[int, int, int]], since: int, tournament: Tournament
) -> _Reading | None:
    """``kept`` brought to ``key``'s version when nothing but orders changed in between:
    every change after version ``since`` was an order (the hub saw each of them), and orders
    move neither the frame version nor anything else a reading holds. One query (the open
    turn's orders) where a reading is eight; at a deadline a tournament's orders come in
    dozens of versions (issue 33)."""
    made, version, frame = key[1]
    kept_made, kept_version, kept_frame = kept.key[1]
    if (made, frame) != (kept_made, kept_frame) or not since <= kept_version < version:
        return None
    if time.monotonic() - kept.read_at >= STATE_TTL:
        return None
    reading = kept.tournament
    open_turn = reading.open_turn
    return _Reading(
        key=key,
        tournament=replace(
            reading,
            tournament=tournament,
            current_orders=turn_current_orders(open_turn) if open_turn is not None else {},
            memo=dict(reading.memo),
        ),
        battles=kept.battles,
        read_at=kept.read_at,
    )


def _state_built(
    *, tournament: Tournament, viewer: Viewer, now: datetime
) -> tuple[dict[str, Any], Tournament]:
    """The view, cut from the version's reading, and the tournament as that read it."""
    reading = _reading_of(tournament, now)
    state = tournament_view(
        tournament=reading.tournament.tournament, viewer=viewer, now=now, reading=reading.tournament
    )
    if viewer.kind == "player" and viewer.player is not None:
        army = viewer.player.army
        # The table the player's army sits at now (meeting, peace, battle), if any.
        state["battle"] = reading.battles.get(army.code) if army is not None else None
    tournament = reading.tournament.tournament
    if viewer.kind == "judge" and tournament.phase in CHECK_IN_PHASES:
        # Issue 32: before the turns, who has opened his join link (or been marked present).
        state["checkin"] = tournament_checkin(tournament=tournament)
    return state, tournament


# --- The views a live update carries (referees.live.hubs) -----------------------------------------


@dataclass(frozen=True)
class View:
    """A socket's view: a judge's (``who``: his account), a player's (``who``: the player,
    ``nonce``: his join link's when the socket was admitted) or the public's, in a
    language."""

    kind: str
    who: int | None = None
    language: str = "en"
    nonce: str = ""


@dataclass(frozen=True)
class ViewBuilt:
    """A view as JSON text, and the player's role, clan and army it was built for."""

    json: str
    role: str = ""
    clan: str = ""
    army: str | None = None


def views_json(
    *, tournament_id: int, views: Sequence[View], orders_only_since: int | None = None
) -> dict[View, ViewBuilt | None]:
    """Each of ``views`` of the tournament now, as ``GET …/state`` would answer its reader.

    None for a view whose reader is no longer what the socket was admitted as (a join link
    reissued or revoked, a judge removed): the page fetches the state and is answered as
    it now is. Runs in a worker thread of the server (``referees.live.hubs``), so it keeps no
    broken database connection.
    """
    close_old_connections()
    try:
        tournament = Tournament.objects.select_related("campaign").filter(pk=tournament_id).first()
        if tournament is None:
            return {}
        ids = [v.who for v in views if v.kind == "player" and v.who is not None]
        players = {
            p.pk: p
            for p in Player.objects.filter(tournament=tournament, pk__in=ids).select_related("army")
        }
        judges = {v.who for v in views if v.kind == "judge" and v.who is not None}
        users = {u.pk: u for u in get_user_model().objects.filter(pk__in=judges)}
        now = timezone.now()
        if orders_only_since is not None:
            # Only orders since that version: the reading kept from then is brought up to
            # date with one query, and every view below is cut from it.
            _reading_of(tournament, now, orders_only_since=orders_only_since)
        built: dict[View, ViewBuilt | None] = {}
        for view in views:
            viewer = _viewer_of(view, tournament, players, users)
            if viewer is None:
                built[view] = None
                continue
            with translation.override(view.language):
                state = tournament_state(tournament=tournament, viewer=viewer, now=now)
            me = state["viewer"]["player"] or {}
            built[view] = ViewBuilt(
                json=json.dumps(state, cls=DjangoJSONEncoder, separators=(",", ":")),
                role=str(me.get("role", "")),
                clan=str(me.get("clan", "")),
                army=me.get("army"),
            )
        return built
    finally:
        close_old_connections()


def _viewer_of(
    view: View,
    tournament: Tournament,
    players: Mapping[int, Player],
    users: Mapping[Any, Any],
) -> Viewer | None:
    if view.kind == "public":
        return Viewer.public()
    if view.kind == "judge":
        user = users.get(view.who)
        return Viewer.judge() if user_judges(user, tournament) else None
    player = players.get(view.who) if view.who is not None else None
    if player is None or not secrets.compare_digest(player.token_nonce, view.nonce):
        return None
    return Viewer.of_player(player)
