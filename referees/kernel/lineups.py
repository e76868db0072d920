"""R1 for a tournament: the line-up its player count gives, and why a line-up does not fit.

The rules engine decides (``sl5r.rules.roles.lineup_admits`` and ``lineup_fill``); here a
tournament's settings become its ``LineupShape`` and each ``LineupProblem`` becomes a
sentence in the reader's language. Every registration path (the console, the pasted list,
the API, a player moved to another clan) and the start use these, so all of them refuse the
same line-ups with the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from referees.kernel.core import TournamentError, refusal
from referees.models import Player, Tournament
from sl5r.rules.errors import LineupError
from sl5r.rules.roles import (
    Lineup,
    LineupProblem,
    LineupShape,
    Role,
    ShortfallRule,
    ThreeVariant,
    lineup_admits,
    lineup_propose,
    lineup_shape,
)
from strategic_map.clans import clan_name

T = TypeVar("T")


def _r1(make: Callable[..., T], *, player_count: int, shortfall: str, three_variant: str) -> T:
    """``make`` (``lineup_propose`` or ``lineup_shape``) for these settings, a count R1
    cannot seat or an unknown choice refused (400 ``lineup`` / ``invalid``)."""
    try:
        return make(
            player_count,
            shortfall=ShortfallRule(shortfall),
            variant=ThreeVariant(three_variant),
        )
    except LineupError as error:
        raise refusal(str(error.problem), "lineup") from error
    except ValueError as error:
        raise refusal(str(error)) from error


def tournament_lineup(*, player_count: int, shortfall: str, three_variant: str) -> Lineup:
    """R1's proposed roles per clan for these settings."""
    return _r1(
        lineup_propose,
        player_count=player_count,
        shortfall=shortfall,
        three_variant=three_variant,
    )


def lineup_shape_for(*, player_count: int, shortfall: str, three_variant: str) -> LineupShape:
    """R1's shape for these settings."""
    return _r1(
        lineup_shape, player_count=player_count, shortfall=shortfall, three_variant=three_variant
    )


def tournament_shape(tournament: Tournament) -> LineupShape:
    return lineup_shape_for(
        player_count=tournament.player_count,
        shortfall=tournament.shortfall,
        three_variant=tournament.three_variant,
    )


def registered_roles(players: Iterable[Player]) -> dict[str, list[Role]]:
    """Each clan's registered roles."""
    roles: dict[str, list[Role]] = {}
    for player in players:
        roles.setdefault(player.clan, []).append(Role(player.role))
    return roles


def role_count_text(role: Role, count: int) -> str:
    if role is Role.GENERAL:
        return ngettext("%(count)s General", "%(count)s Generals", count) % {"count": count}
    if role is Role.DAIMYO:
        return ngettext("%(count)s Daimyo", "%(count)s Daimyo", count) % {"count": count}
    return ngettext("%(count)s Karo", "%(count)s Karo", count) % {"count": count}


def roles_text(roles: Sequence[Role]) -> str:
    """A clan's roles in words: "2 Generals, 1 Daimyo"."""
    return ", ".join(role_count_text(role, roles.count(role)) for role in dict.fromkeys(roles))


def role_name(role: Role) -> str:
    return str(Player.Role(role.value).label)


def lineup_problem_text(problem: LineupProblem, shape: LineupShape) -> str:
    """One problem, for the judge: what R1 gives and what the line-up has."""
    players = shape.players
    clan = clan_name(problem.clan) if problem.clan else ""
    role = problem.role
    if problem.code == "not_in_game":
        return _("the %(clan)s are not in this tournament (R1 a)") % {"clan": clan}
    if problem.code == "too_many" and role is not None and problem.allowed == 0:
        return _(
            "%(clan)s: with %(players)s players R1 gives no clan a %(role)s (a clan has %(full)s)"
        ) % {
            "clan": clan,
            "players": players,
            "role": role_name(role),
            "full": roles_text(shape.full),
        }
    if problem.code == "too_many" and role is not None:
        return _(
            "%(clan)s: with %(players)s players a clan has at most %(allowed)s, not %(have)s (R1)"
        ) % {
            "clan": clan,
            "players": players,
            "allowed": role_count_text(role, problem.allowed),
            "have": problem.have,
        }
    if problem.code == "full_clans":
        return _(
            "with %(players)s players only %(allowed)s clans have %(full)s; the others have "
            "%(smaller)s (R1 b), but %(clans)s would all have more"
        ) % {
            "players": players,
            "allowed": shape.full_clans,
            "full": roles_text(shape.full),
            "smaller": roles_text(shape.smaller) or _("nobody"),
            "clans": ", ".join(clan_name(c) for c in problem.clans),
        }
    if problem.code == "missing" and role is not None:
        return _("%(clan)s: %(have)s of %(wanted)s registered") % {
            "clan": clan,
            "have": problem.have,
            "wanted": role_count_text(role, problem.allowed),
        }
    if problem.code == "players":
        return _("%(have)s of %(players)s players are registered") % {
            "have": problem.have,
            "players": problem.allowed,
        }
    return problem.code


def lineup_problems_text(problems: Sequence[LineupProblem], shape: LineupShape) -> str:
    return "; ".join(lineup_problem_text(p, shape) for p in problems)


def lineup_refusal(
    problems: Sequence[LineupProblem], shape: LineupShape, *, code: str = "lineup"
) -> TournamentError:
    """The refusal of a line-up R1 does not allow, naming every problem: ``lineup`` for a
    registration R1 refuses, ``lineup_incomplete`` for a start before every seat is filled."""
    return refusal(
        _("line-up: %(problems)s") % {"problems": lineup_problems_text(problems, shape)}, code
    )


def lineup_refuse_unless_fits(
    shape: LineupShape, registered: Mapping[str, Sequence[Role]], *, complete: bool = False
) -> None:
    problems = lineup_admits(shape, registered, complete=complete)
    if problems:
        raise lineup_refusal(problems, shape, code="lineup_incomplete" if complete else "lineup")
