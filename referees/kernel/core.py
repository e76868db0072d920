"""The tournament kernel: the lock, the log, announcements, refusals and who acted.

Every tournament operation (set-up, the clock, orders, battles) takes the tournament's lock,
writes its lines in the log (R11) and announces itself after commit through these. They sit
below every domain module (``referees.services`` and its ``roster``, ``judges``,
``battles``), so that each uses them by their public names.

One operation is one unit of work (``unit_of_work``): however many changes it announces —
a turn resolution announces the turn and its battle tables — the tournament's version grows
once and one event goes out, after commit, through the ``tournament_changed`` signal. The
kernel does not know who listens: ``referees.live.events`` (the live updates) connects to it when
the app is ready, and so does ``referees.venue.backup_signals`` (with ``record_changed``, for the
changes no watcher hears of), so that nothing here imports the layers above.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Model
from django.db.models.expressions import Col
from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal
from django.utils.translation import gettext as _

from referees.kernel.prepared_sql import statement_run, statements_pipelined
from referees.models import LogEntry, Player, Tournament
from strategic_map.models import Army, Campaign, Turn

tournament_changed = Signal()
"""Sent once per committed unit of work that changed a tournament, with ``tournament_id``,
``version`` (the new one), ``kind`` (the last change announced: what the event says),
``kinds`` (every change, in order) and ``data`` (what the announcements passed, merged)."""

record_changed = Signal()
"""Sent, inside its transaction, by a change that watchers do not hear of but that a venue
must not lose: a judge's account or API key, a join link, a judge's paper order. With
``reason`` (``judges``, ``judge_key``, ``join_link``, ``paper_order``); the sender is the
model whose row changed (the user model, ``JudgeKey``, ``Player``, ``Tournament``). A
listener that acts on the committed change waits for the commit itself
(``transaction.on_commit``)."""


class TournamentError(ValueError):
    """A request that cannot be carried out; the message says why, for a person.

    ``code`` names the problem in the domain's words ("phase", "late", "not_found"); which
    HTTP status it becomes is the transport's business (``sl5r.api.ERROR_STATUS``).
    """

    def __init__(self, message: str, *, code: str = "invalid") -> None:
        message = str(message)  # a lazy translation is read now, in the asker's language
        super().__init__(message)
        self.message = message
        self.code = code


class RulesRejection(TournamentError):
    """An order the rules engine rejects (R4–R9), with the engine's own reason code
    (``not_adjacent``, ``in_battle``, ``late``…): the order is understood and refused as
    the turn would refuse it, unlike a service's ``late`` or ``in_battle``, which say that
    the tournament's state refuses the request."""


def refusal(message: str, code: str = "invalid") -> TournamentError:
    return TournamentError(message, code=code)


@dataclass(frozen=True)
class Actor:
    """Who did something, as the log shows it."""

    label: str
    judge: bool = False

    @classmethod
    def of_user(cls, user: AbstractBaseUser) -> Actor:
        return cls(label=f"judge {user.get_username()}", judge=True)

    @classmethod
    def of_player(cls, player: Player) -> Actor:
        return cls.of_seat(role=player.role, name=player.name, clan=player.clan)

    @classmethod
    def of_seat(cls, *, role: str, name: str, clan: str) -> Actor:
        return cls(label=f"{role} {name} ({clan})")


CLOCK = Actor(label="clock")


def log_write(
    tournament: Tournament,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    **data: Any,
) -> LogEntry:
    entry = log_line(
        tournament, actor=actor, action=action, now=now, turn=turn, reason=reason, **data
    )
    entry.save()
    return entry


def log_line(
    tournament: Tournament,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    **data: Any,
) -> LogEntry:
    """A log line not yet saved: ``log_write`` saves one, a group commit several at once."""
    return LogEntry(
        tournament=tournament,
        at=now,
        actor=actor.label,
        action=action,
        turn=turn,
        reason=reason,
        data=data,
    )


# The changes that leave what an order is checked against as it was (``frame_version``):
# orders themselves, a Daimyo's instructions, a judge's announcements, calls for a judge
# and check-ins.
FRAME_KEEPING_KINDS = frozenset({"order", "instruction", "announcement", "flag", "call", "checkin"})


@dataclass
class Change:
    """What one unit of work changed in one tournament: its new version and what it said."""

    tournament_id: int
    campaign_id: int
    version: int
    kinds: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def frame_changed(self) -> bool:
        return any(kind not in FRAME_KEEPING_KINDS for kind in self.kinds)

    def send(self) -> None:
        tournament_changed.send(
            sender=Tournament,
            tournament_id=self.tournament_id,
            version=self.version,
            kind=self.kinds[-1],
            kinds=tuple(self.kinds),
            data=self.data,
        )


@dataclass
class Unit:
    """The changes of the operation under way, by tournament; and the tournaments and
    campaigns whose rows it saved (``frame_rows_saved``), announced or not."""

    changes: dict[int, Change] = field(default_factory=dict)
    saved_tournaments: set[int] = field(default_factory=set)
    saved_campaigns: set[int] = field(default_factory=set)
    # What ``unit_writes_pipelined`` opened. Closing it reads the pipelined writes' answers
    # (the new rows' keys) and leaves pipeline mode: the first hook after the COMMIT, which
    # waited for them; before a savepoint ends; and, failing both, as the unit ends.
    pipeline: ExitStack = field(default_factory=ExitStack)
    pipelined: bool = False

    def versions_write(self) -> None:
        """One UPDATE per changed campaign: the new version and, unless only orders and
        messages changed, a new frame; a frame for every other row saved."""
        for change in self.changes.values():
            frame = (
                change.frame_changed
                or change.tournament_id in self.saved_tournaments
                or change.campaign_id in self.saved_campaigns
            )
            self.saved_tournaments.discard(change.tournament_id)
            self.saved_campaigns.discard(change.campaign_id)
            _campaign_version_write(change.campaign_id, change.version, frame=frame)
        frame_version_bump(tournaments=self.saved_tournaments, campaigns=self.saved_campaigns)


def _campaign_version_write(campaign_id: int, version: int, *, frame: bool) -> None:
    # Plain SQL: the ORM's ``filter().update()`` built this one-line UPDATE anew for each
    # order, a tenth of an order's time (benchmarks/order_cost.py).
    connection = connections[router.db_for_write(Campaign)]
    quote = connection.ops.quote_name
    bump = f", {quote('frame_version')} = {quote('frame_version')} + 1" if frame else ""
    sql = (
        f"UPDATE {quote(Campaign._meta.db_table)} SET {quote('version')} = %s{bump}"
        f" WHERE {quote('id')} = %s"
    )
    statement_run(sql, [version, campaign_id], using=connection.alias)


_UNIT: ContextVar[Unit | None] = ContextVar("sl5r_unit_of_work", default=None)


@contextmanager
def unit_of_work() -> Iterator[None]:
    """One operation: a transaction in which every ``announce`` of a tournament counts as
    one change — one version, one ``tournament_changed`` after commit (the live event and,
    at a venue, the backup).

    Used as ``with unit_of_work():`` or as the decorator ``@unit_of_work()`` in place of
    ``@transaction.atomic``. A unit inside another (a turn resolution opening battle
    tables) joins it; nothing is sent when the transaction rolls back.
    """
    if _UNIT.get() is not None:
        with transaction.atomic():
            yield
        return
    unit = Unit()
    token = _UNIT.set(unit)
    # Pipelined writes (``unit_writes_pipelined``) go with the COMMIT, which waits for all
    # of them and fails with their errors. In a transaction begun outside (a savepoint
    # here), they are waited for before the savepoint ends, so that an error rolls it back.
    outermost = not transaction.get_connection(router.db_for_write(Campaign)).in_atomic_block
    try:
        with unit.pipeline, transaction.atomic():
            yield
            unit.versions_write()
            if not outermost:
                unit.pipeline.close()
            for change in unit.changes.values():
                transaction.on_commit(change.send)
    finally:
        _UNIT.reset(token)


def unit_writes_pipelined() -> None:
    """The operation's writes from here on, its version's included, go to the database
    without waiting for each answer, and with its COMMIT, which waits once for all of them
    (``referees.kernel.prepared_sql.statements_pipelined``: PostgreSQL; elsewhere nothing changes).
    The new rows' keys are set as the first thing after the commit, before any hook
    registered from here on runs.

    For an operation that has read all it needs: a General's order, 48 at a time, is three
    writes that wait for nothing (issue 17). Reads after this point still get their rows at
    once, but nothing after it may depend on a write's count (``QuerySet.update()``,
    ``Model.save()`` of a row already stored), nor read a new row's key before the commit.
    """
    unit = _UNIT.get()
    if unit is None or unit.pipelined:
        return
    unit.pipelined = True
    unit.pipeline.enter_context(statements_pipelined(using=router.db_for_write(Campaign)))
    transaction.on_commit(unit.pipeline.close)


def announce(tournament: Tournament, kind: str, **data: Any) -> None:
    """Count a change that watchers must hear of: the first in the operation moves the
    version on; every one adds its kind (and its ``turn``/``phase``) to the one event."""
    unit = _UNIT.get()
    if unit is None:
        # Outside a unit of work the announcement is its own operation, in the caller's
        # transaction.
        with unit_of_work():
            announce(tournament, kind, **data)
        return
    campaign = tournament.campaign
    change = unit.changes.get(tournament.pk)
    if change is None:
        # The campaign row is locked with the tournament's (tournament_lock), so the version
        # read with it is current. It is written once, as the unit ends (Unit.versions_write).
        change = unit.changes[tournament.pk] = Change(
            tournament_id=tournament.pk, campaign_id=campaign.pk, version=campaign.version + 1
        )
    campaign.version = change.version
    change.kinds.append(kind)
    change.data.update(data)


def tournament_lock(tournament_id: int) -> Tournament:
    """The tournament row and its campaign's, locked until the transaction ends.

    ``SELECT … FOR UPDATE`` over the join locks both rows, so a tournament's operations run
    one at a time and read a campaign nobody else is changing.
    """
    try:
        return (
            Tournament.objects.select_for_update()
            .select_related("campaign")
            # The map's own copy is read only where a process has not built its graph yet
            # (campaign_game_map); decoding it on every locked operation was wasted.
            .defer("campaign__map_data")
            .get(pk=tournament_id)
        )
    except Tournament.DoesNotExist:
        raise refusal(
            _("there is no tournament %(id)s") % {"id": tournament_id}, "not_found"
        ) from None


def frame_version_bump(*, tournaments: set[int], campaigns: set[int]) -> None:
    """A new frame for these tournaments and campaigns (``Campaign.frame_version``)."""
    if tournaments:
        Campaign.objects.filter(tournament__in=tournaments).update(
            frame_version=F("frame_version") + 1
        )
    if campaigns:
        Campaign.objects.filter(pk__in=campaigns).update(frame_version=F("frame_version") + 1)


def frame_row_saved(*, sender: type[Model], instance: Model, **_kwargs: Any) -> None:
    """A player, army, turn or campaign row was saved or deleted: its tournament's frame is
    new. Every service announces a change of these, but a revoked join link, the admin site,
    a shell or a test's own rows do not; this is what keeps a cached frame from outliving
    them. Within a unit of work it is counted once, with the version, as the unit ends."""
    tournaments: set[int] = set()
    campaigns: set[int] = set()
    if isinstance(instance, Player):
        tournaments.add(instance.tournament_id)
    elif isinstance(instance, Campaign):
        campaigns.add(instance.pk)
    elif isinstance(instance, Army | Turn):
        campaigns.add(instance.campaign_id)
    unit = _UNIT.get()
    if unit is None:
        frame_version_bump(tournaments=tournaments, campaigns=campaigns)
    else:
        unit.saved_tournaments |= tournaments
        unit.saved_campaigns |= campaigns


def frame_signals_connect() -> None:
    """Listen for saved frame rows (``frame_row_saved``); called once, when the app is ready."""
    for model in (Player, Army, Turn, Campaign):
        post_save.connect(frame_row_saved, sender=model, dispatch_uid=f"frame-{model.__name__}")
        post_delete.connect(
            frame_row_saved, sender=model, dispatch_uid=f"frame-del-{model.__name__}"
        )


def tournament_lock_light(tournament_id: int) -> Tournament:
    """``tournament_lock`` for the one operation that runs 48 times a second, an order:
    the same rows locked the same way, with only the columns an order reads (the phase and
    the clock; the campaign's version and frame version) and without building the query
    each time: Django spent ten times the database's time building the full lock's SQL.

    The other columns are deferred, so reading one costs a query (the query-count tests
    see it); the campaign's board and map are read by whoever needs them (the order frame).
    """
    db = router.db_for_write(Tournament)
    connection = connections[db]
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = _LIGHT_LOCK_SQL.format(t=Tournament._meta.db_table, c=Campaign._meta.db_table, lock=lock)
    # A cursor, not ``raw()``: the raw queryset resolved its columns and model anew on
    # every call, two thirds of the lock's time (benchmarks/order_cost.py).
    with connection.cursor() as cursor:
        cursor.execute(sql, [tournament_id])
        row = cursor.fetchone()
    if row is None:
        raise refusal(
            _("there is no tournament %(id)s") % {"id": tournament_id}, "not_found"
        ) from None
    *tournament_values, version, frame_version = row
    tournament = Tournament.from_db(
        db, _LIGHT_LOCK_FIELDS, _converted(connection, tournament_values)
    )
    tournament.campaign = Campaign.from_db(
        db, ["id", "version", "frame_version"], [tournament.campaign_id, version, frame_version]
    )
    return tournament


# In the model's order of fields, as ``Model.from_db`` reads a partial row.
_LIGHT_LOCK_COLUMNS = [
    field
    for field in Tournament._meta.concrete_fields
    if field.attname in {"id", "phase", "paused_remaining", "deadline", "campaign_id"}
]
_LIGHT_LOCK_FIELDS = [field.attname for field in _LIGHT_LOCK_COLUMNS]


_Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]
_LIGHT_LOCK_CONVERTERS: dict[str, list[tuple[Col, list[_Converter]]]] = {}


def _converted(connection: BaseDatabaseWrapper, values: list[Any]) -> list[Any]:
    """The light lock's tournament columns as the ORM reads them (SQLite gives the deadline
    as text), with the converters the ORM's compiler would apply, looked up once per
    database."""
    converters = _LIGHT_LOCK_CONVERTERS.get(connection.alias)
    if converters is None:
        converters = []
        for column in _LIGHT_LOCK_COLUMNS:
            col = column.cached_col
            converters.append(
                (col, connection.ops.get_db_converters(col) + col.get_db_converters(connection))
            )
        _LIGHT_LOCK_CONVERTERS[connection.alias] = converters
    out = []
    for (col, functions), value in zip(converters, values, strict=True):
        for function in functions:
            value = function(value, col, connection)
        out.append(value)
    return out


_LIGHT_LOCK_SQL = (
    "SELECT "
    + ", ".join(f"t.{column.column}" for column in _LIGHT_LOCK_COLUMNS)
    + ", c.version, c.frame_version"
    " FROM {t} t INNER JOIN {c} c ON c.id = t.campaign_id WHERE t.id = %s{lock}"
)
