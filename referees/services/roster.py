"""Players registered many at once, from a list, and the places R1 still leaves each clan.

A list of players comes pasted (one player a line) or as a CSV file, read into
``RosterLine``s by ``referees.forms.roster``; ``roster_preview`` shows what R1 would make of
it on top of the players already registered, with every problem per line, before anything is
stored, and ``roster_register`` stores all of it or none. R1 is the rules engine's
(``sl5r.rules.roles.lineup_fill`` proposes a clan and a role where a line leaves them out;
``lineup_admits`` says whether a line-up fits) and its words are
``referees.kernel.lineups``'; every player is stored by
``referees.services.player_register``, the one place that creates a player and his army.

One registered player renamed, moved, removed or replaced is ``referees.services.players``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from referees import services
from referees.kernel.core import (
    Actor,
    TournamentError,
    announce,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.lineups import (
    lineup_problem_text,
    registered_roles,
    role_name,
    roles_text,
    tournament_shape,
)
from referees.kernel.names import name_key, name_problem, name_spaced
from referees.models import Player, Tournament
from sl5r.rules.clans import CLAN_NAMES as CLAN_SPELLINGS
from sl5r.rules.clans import CLANS
from sl5r.rules.roles import LineupSeat, LineupShape, Role, lineup_admits, lineup_fill
from strategic_map.clans import CLAN_NAMES, clan_name

Phase = Tournament.Phase
MAX_NAME = services.PLAYER_NAME_MAX


# --- A list's lines ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RosterLine:
    """One player as the list writes him: his line's number and the cells as written
    (``referees.forms.roster`` reads a pasted list or a CSV file into these)."""

    number: int
    name: str
    clan: str = ""
    role: str = ""
    extra: tuple[str, ...] = ()


# --- Clans and roles as people write them --------------------------------------------


def spelling_key(text: str) -> str:
    """What a clan, a role or a column header is compared by: any case, ё as е, no spaces,
    dashes or underscores (``referees.forms.roster`` reads a CSV header by it too)."""
    folded = text.casefold().replace("ё", "е")
    return "".join(ch for ch in folded if not ch.isspace() and ch not in "-_")


def _in_every_language(label: object) -> list[str]:
    names = []
    for code, _language in settings.LANGUAGES:
        with translation.override(code):
            names.append(str(label))
    return names


def clan_aliases() -> dict[str, str]:
    """Every way a clan may be written (its id, its name in English or Russian) → its id."""
    aliases: dict[str, str] = {}
    for clan in CLANS:
        names = [clan, *CLAN_SPELLINGS[clan], *_in_every_language(CLAN_NAMES[clan])]
        for name in names:
            aliases[spelling_key(name)] = clan
    return aliases


def role_aliases() -> dict[str, Role]:
    """Every way a role may be written (its id, its label in English or Russian) → the role."""
    aliases: dict[str, Role] = {}
    for role in Role:
        names = [role.value, *_in_every_language(Player.Role(role.value).label)]
        for name in names:
            aliases[spelling_key(name)] = role
    return aliases


_name = name_spaced
_name_key = name_key


# --- The preview ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RosterRow:
    """A line as it would be registered: the clan and role (given or proposed by R1), the
    army a General would get, and everything wrong with the line (empty: it can be stored)."""

    line: RosterLine
    name: str
    clan: str | None
    role: Role | None
    proposed_clan: bool = False
    proposed_role: bool = False
    army: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def number(self) -> int:
        return self.line.number


@dataclass(frozen=True, slots=True)
class RosterPreview:
    """What a list would register, line by line, on top of ``registered`` players."""

    rows: tuple[RosterRow, ...]
    registered: int
    player_count: int

    @property
    def places_left(self) -> int:
        return self.player_count - self.registered

    @property
    def problems(self) -> list[str]:
        """Every problem, each with its line: "line 3: …"."""
        return [
            _("line %(line)s: %(problem)s") % {"line": row.number, "problem": problem}
            for row in self.rows
            for problem in row.problems
        ]

    @property
    def ok(self) -> bool:
        """Something to register, and nothing wrong with it."""
        return bool(self.rows) and not any(row.problems for row in self.rows)


class RosterRefused(TournamentError):
    """A list refused as a whole (``roster``); ``preview`` says what is wrong per line."""

    def __init__(self, message: str, preview: RosterPreview) -> None:
        super().__init__(message, code="roster")
        self.preview = preview


def _seat_problems(
    seat: LineupSeat, asked_role: Role | None, shape: LineupShape
) -> tuple[str, ...]:
    """The words for a line R1 has no place for."""
    if seat.clan is None:
        if asked_role is not None:
            return (
                _("role: no clan has a place left for a %(role)s (R1)")
                % {"role": role_name(asked_role)},
            )
        return (_("no clan has a place left (R1)"),)
    if asked_role is None and all(p.code == "too_many" for p in seat.problems):
        return (
            _("%(clan)s: the clan is full (with %(players)s players R1 gives a clan %(roles)s)")
            % {
                "clan": clan_name(seat.clan),
                "players": shape.players,
                "roles": roles_text(shape.full),
            },
        )
    return tuple(lineup_problem_text(problem, shape) for problem in seat.problems)


def _line_problems(
    line: RosterLine,
    *,
    clan: str | None,
    role: Role | None,
    taken: dict[str, str],
    first_line: dict[str, int],
) -> list[str]:
    """What is wrong with a line itself, before R1 seats it (``first_line`` is updated)."""
    found: list[str] = []
    name = _name(line.name)
    key = _name_key(name)
    problem = name_problem(line.name, field="name")
    if not name:
        found.append(_("name: the line has no name"))
    elif problem is not None:
        found.append(problem)
    elif len(name) > MAX_NAME:
        found.append(_("name: at most %(max)s characters") % {"max": MAX_NAME})
    elif key in taken:
        found.append(_("name: %(name)s is already registered") % {"name": taken[key]})
    elif key in first_line:
        found.append(
            _("name: %(name)s is also on line %(line)s") % {"name": name, "line": first_line[key]}
        )
    else:
        first_line[key] = line.number
    if line.extra:
        found.append(_("too many columns: a line is name; clan; role"))
    if line.clan and clan is None:
        found.append(
            _(
                'clan: unknown clan "%(clan)s" (Crab, Crane, Dragon, Lion, Phoenix, '
                "Scorpion, Shadowlands or Unicorn)"
            )
            % {"clan": line.clan}
        )
    if line.role and role is None:
        found.append(
            _('role: unknown role "%(role)s" (General, Daimyo or Karo)') % {"role": line.role}
        )
    return found


def _preview(
    tournament: Tournament, players: Sequence[Player], lines: Sequence[RosterLine]
) -> RosterPreview:
    shape = tournament_shape(tournament)
    clans, roles = clan_aliases(), role_aliases()
    taken = {_name_key(p.name): p.name for p in players}
    first_line: dict[str, int] = {}
    left = tournament.player_count - len(players)
    problems: list[list[str]] = []
    asked: list[tuple[str | None, Role | None]] = []
    to_seat: list[int] = []  # the lines R1 is asked to seat, by index
    for index, line in enumerate(lines):
        clan = clans.get(spelling_key(line.clan)) if line.clan else None
        role = roles.get(spelling_key(line.role)) if line.role else None
        found = _line_problems(line, clan=clan, role=role, taken=taken, first_line=first_line)
        if index >= left:
            found.append(
                ngettext(
                    "more players than places: the tournament is for %(count)s players and "
                    "%(left)s place was left",
                    "more players than places: the tournament is for %(count)s players and "
                    "%(left)s places were left",
                    max(left, 0),
                )
                % {"count": tournament.player_count, "left": max(left, 0)}
            )
        elif (clan is not None or not line.clan) and (role is not None or not line.role):
            asked.append((clan, role))
            to_seat.append(index)
        problems.append(found)
    seats = lineup_fill(shape, registered_roles(players), asked)
    seat_of = dict(zip(to_seat, seats, strict=True))
    generals: dict[str, int] = {}
    for player in players:
        if player.role == Role.GENERAL.value:
            generals[player.clan] = generals.get(player.clan, 0) + 1
    rows: list[RosterRow] = []
    for index, line in enumerate(lines):
        seat = seat_of.get(index)
        found = problems[index]
        if seat is not None and seat.problems:
            found.extend(_seat_problems(seat, seat.role, shape))
        if seat is None or seat.problems:
            rows.append(
                RosterRow(
                    line=line,
                    name=_name(line.name),
                    clan=clans.get(spelling_key(line.clan)),
                    role=roles.get(spelling_key(line.role)),
                    problems=tuple(found),
                )
            )
            continue
        army = None
        if seat.role is Role.GENERAL and seat.clan is not None:
            generals[seat.clan] = generals.get(seat.clan, 0) + 1
            army = f"{seat.clan}-{generals[seat.clan]}"
        rows.append(
            RosterRow(
                line=line,
                name=_name(line.name),
                clan=seat.clan,
                role=seat.role,
                proposed_clan=seat.proposed_clan,
                proposed_role=seat.proposed_role,
                army=army,
                problems=tuple(found),
            )
        )
    return RosterPreview(
        rows=tuple(rows), registered=len(players), player_count=tournament.player_count
    )


def _refuse_unless_setup(tournament: Tournament) -> None:
    if tournament.phase != Phase.SETUP:
        raise refusal(_("players are registered during set-up only"), "phase")


def roster_preview(*, tournament: Tournament, lines: Sequence[RosterLine]) -> RosterPreview:
    """R1: what ``lines`` would register on top of the registered players; nothing is stored."""
    _refuse_unless_setup(tournament)
    return _preview(tournament, list(tournament.players.all()), lines)


@unit_of_work()
def roster_register(
    *, tournament_id: int, lines: Sequence[RosterLine], actor: Actor, now: datetime
) -> list[Player]:
    """Register every player of ``lines``, or none: any problem refuses the whole list
    (``RosterRefused``, 422), naming each line's problems."""
    tournament = tournament_lock(tournament_id)
    _refuse_unless_setup(tournament)
    if not lines:
        raise refusal(
            _("lines: the list is empty: write one player a line, name; clan; role"), "empty"
        )
    preview = _preview(tournament, list(tournament.players.all()), lines)
    if not preview.ok:
        raise RosterRefused(
            _("players: nothing was registered: %(problems)s")
            % {"problems": "; ".join(preview.problems)},
            preview,
        )
    stored: list[Player] = []
    for row in preview.rows:
        assert row.clan is not None and row.role is not None
        try:
            stored.append(
                services.player_register(
                    tournament=tournament,
                    name=row.name,
                    clan=row.clan,
                    role=row.role.value,
                    actor=actor,
                    now=now,
                )
            )
        except TournamentError as error:
            # The map may still refuse a General R1 allows (a clan's home provinces).
            raise refusal(
                _("players: nothing was registered: line %(line)s: %(problem)s")
                % {"line": row.number, "problem": error.message},
                error.code,
            ) from error
    announce(tournament, "players", registered=len(stored))
    return stored


# --- What is left of the line-up ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClanPlaces:
    """A clan's registered roles and the ones R1 still leaves it (this clan alone)."""

    clan: str
    registered: tuple[Role, ...]
    open: tuple[Role, ...]


def lineup_places(*, tournament: Tournament) -> list[ClanPlaces]:
    """Each clan in the game: who is registered and what R1 still allows it to take.

    Where some clans are one member fewer (R1 b), a clan may take a full line-up only while
    fewer clans than allowed have one; so the places of several clans are not all open at
    once, and the page says so beside them.
    """
    shape = tournament_shape(tournament)
    registered = registered_roles(tournament.players.all())
    places: list[ClanPlaces] = []
    for clan in shape.clans:
        trial = {c: list(r) for c, r in registered.items()}
        opened: list[Role] = []
        for role in dict.fromkeys(shape.full):
            while True:
                trial.setdefault(clan, []).append(role)
                if lineup_admits(shape, trial):
                    trial[clan].pop()
                    break
                opened.append(role)
        places.append(ClanPlaces(clan, tuple(registered.get(clan, ())), tuple(opened)))
    return places
