"""A state read's rows in one statement built once: the tournament, its campaign's version,
and the player a join link or session claims to be, with his army.

``GET …/state`` is most of a league's requests, and at an unchanged version its view is kept
(``referees.reading.state``): the cost of a read is then what it takes to know whose view to
hand out. The ORM built two queries for that on every read (the tournament with its campaign,
the token's player with his army), and compiling them cost several times the cache hit they
guarded (issue 42, ``benchmarks/state_read.py``). Here the same rows come in one statement,
its text made once per database, read through a plain cursor and turned into model instances
with the converters the ORM would apply. Nothing is kept between requests: the player's link
(``token_nonce``), role and army are read on every request, so a revoked or replaced link is
refused at the very next one.

The campaign comes without its board and map copy (the two large JSON columns), which a kept
view does not need; whoever builds a view reads the tournament whole (``tournament_get``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model
from django.utils.translation import gettext

from referees.kernel.access import ERROR_NO_TOURNAMENT
from referees.kernel.core import TournamentError
from referees.kernel.tokens import PlayerClaim
from referees.models import Player, Tournament
from strategic_map.models import Army, Campaign

# The campaign's columns a kept view's key and clock need: all but the two large JSON ones.
_CAMPAIGN_LEFT_OUT = frozenset({"board", "map_data"})


def _columns(model: type[Model], left_out: frozenset[str] = frozenset()) -> list[Field[Any, Any]]:
    """The model's concrete columns in its own order (as ``Model.from_db`` reads a row)."""
    return [f for f in model._meta.concrete_fields if f.attname not in left_out]


_PARTS: list[tuple[type[Model], str, list[Field[Any, Any]]]] = [
    (Tournament, "t", _columns(Tournament)),
    (Campaign, "c", _columns(Campaign, _CAMPAIGN_LEFT_OUT)),
    (Player, "p", _columns(Player)),
    (Army, "a", _columns(Army)),
]

_ALL_FIELDS = [field for _model, _alias, fields in _PARTS for field in fields]


def _key_fits(key: int) -> bool:
    return -(2**63) <= key < 2**63


_Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]
# Per database alias: the statement and each column's converters, made at its first read.
_PREPARED: dict[str, tuple[str, list[list[_Converter]]]] = {}


def _prepared(connection: BaseDatabaseWrapper) -> tuple[str, list[list[_Converter]]]:
    found = _PREPARED.get(connection.alias)
    if found is not None:
        return found
    quote = connection.ops.quote_name
    selected = ", ".join(
        f"{alias}.{quote(str(field.column))}"
        for _model, alias, fields in _PARTS
        for field in fields
    )
    table = {model: quote(model._meta.db_table) for model, _alias, _fields in _PARTS}
    sql = (
        f"SELECT {selected} FROM {table[Tournament]} t"
        f" INNER JOIN {table[Campaign]} c ON c.{quote('id')} = t.{quote('campaign_id')}"
        f" LEFT OUTER JOIN {table[Player]} p ON p.{quote('id')} = %s"
        f" LEFT OUTER JOIN {table[Army]} a ON a.{quote('id')} = p.{quote('army_id')}"
        f" WHERE t.{quote('id')} = %s"
    )
    converters = [
        connection.ops.get_db_converters(field.cached_col)
        + field.cached_col.get_db_converters(connection)
        for _model, _alias, fields in _PARTS
        for field in fields
    ]
    _PREPARED[connection.alias] = found = (sql, converters)
    return found


@dataclass(frozen=True)
class Reader:
    """A state read's rows: the tournament (its campaign without board and map copy), and
    the claimed player when his link still stands (``claim_stands``)."""

    tournament: Tournament
    player: Player | None
    claim_stands: bool


def state_reader(*, tournament_id: int, claim: PlayerClaim | None) -> Reader:
    """The tournament and the player ``claim`` names, in one statement; ``TournamentError``
    404 when there is no such tournament. ``player`` is None when there is no claim, or its
    player is gone or his link was revoked or replaced since (``claim_stands`` False)."""
    db = router.db_for_read(Tournament)
    connection = connections[db]
    sql, converters = _prepared(connection)
    player_id = claim.player_id if claim is not None else None
    row = None
    # A key no column can hold matches no row (as the ORM answers it); the driver would
    # refuse to send it.
    if _key_fits(tournament_id) and (player_id is None or _key_fits(player_id)):
        with connection.cursor() as cursor:
            cursor.execute(sql, [player_id, tournament_id])
            row = cursor.fetchone()
    if row is None:
        raise TournamentError(
            gettext(ERROR_NO_TOURNAMENT) % {"id": tournament_id}, code="not_found"
        )
    values = _converted(connection, converters, row)
    instances: list[Model | None] = []
    start = 0
    for model, _alias, fields in _PARTS:
        part = values[start : start + len(fields)]
        start += len(fields)
        # A LEFT JOIN that found nothing: every column NULL, the key first of all.
        instances.append(
            None if part[0] is None else model.from_db(db, [f.attname for f in fields], part)
        )
    tournament, campaign, player, army = instances
    assert isinstance(tournament, Tournament) and isinstance(campaign, Campaign)
    tournament.campaign = campaign
    stands = (
        claim is not None
        and isinstance(player, Player)
        and secrets.compare_digest(player.token_nonce, claim.nonce)
    )
    if not stands:
        return Reader(tournament=tournament, player=None, claim_stands=False)
    assert isinstance(player, Player)
    player.army = army if isinstance(army, Army) else None
    return Reader(tournament=tournament, player=player, claim_stands=True)


def _converted(
    connection: BaseDatabaseWrapper, converters: list[list[_Converter]], row: Sequence[Any]
) -> list[Any]:
    out = []
    for functions, value, field in zip(converters, row, _ALL_FIELDS, strict=True):
        if value is not None:
            for function in functions:
                value = function(value, field.cached_col, connection)
        out.append(value)
    return out
