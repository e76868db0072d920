"""What each viewer may see of a tournament (R1.1), decided in one place.

Pages, the API and live updates all build their payloads from ``tournament_state``, so a
thing hidden from a role is never sent to it by any of them: a General whose clan has a
Daimyo gets his own army, his province and the provinces next to it, and nothing else.
This module holds who looks (``Viewer``), the clans' roles and what they let him see
(``viewer_sight``), and a player as every answer shows him; the battles use them too, so
they sit in the kernel, below the battles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from referees.models import Player, Tournament
from sl5r.rules.roles import (
    Role,
    general_visible_provinces,
    public_display_shows_armies,
    role_visibility,
)
from strategic_map.board import Board
from strategic_map.selectors import campaign_game_map

ViewerKind = Literal["judge", "player", "public"]


@dataclass(frozen=True)
class Viewer:
    kind: ViewerKind
    player: Player | None = None
    label: str = ""

    @classmethod
    def judge(cls, label: str = "judge") -> Viewer:
        return cls(kind="judge", label=label)

    @classmethod
    def public(cls) -> Viewer:
        return cls(kind="public")

    @classmethod
    def of_player(cls, player: Player) -> Viewer:
        return cls(kind="player", player=player)


def clan_roles(tournament: Tournament) -> dict[str, list[Role]]:
    roles: dict[str, list[Role]] = {}
    for clan, role in tournament.players.values_list("clan", "role"):
        roles.setdefault(clan, []).append(Role(role))
    return roles


def clan_held_roles(tournament: Tournament, clan: str) -> list[Role]:
    """The roles held in ``clan``: what its members may see and do depends on them (R1.1)."""
    return [Role(r) for r in tournament.players.filter(clan=clan).values_list("role", flat=True)]


@dataclass(frozen=True)
class Sight:
    """The part of the board a viewer sees: ``provinces`` None means all of them."""

    all_armies: bool
    provinces: frozenset[str] | None
    own_army: str | None
    orders_of_clan: str | None  # None: no orders; "*": every order
    scores: bool


def viewer_sight(tournament: Tournament, viewer: Viewer, roles: dict[str, list[Role]]) -> Sight:
    finished = tournament.phase == Tournament.Phase.FINISHED
    if viewer.kind == "judge":
        return Sight(True, None, None, "*", True)
    if finished:
        # Issue 30: once the game is over nothing is secret any more; players and the
        # public see the final board, the standings and every played turn (R12).
        return Sight(
            True,
            None,
            viewer.player.army.code if viewer.player and viewer.player.army else None,
            None,
            True,
        )
    if viewer.kind == "public":
        shows = public_display_shows_armies(roles)
        # R1.1: scores at the end; and, where no clan has a Daimyo, every player sees the whole
        # board, so the screen may show each clan's provinces and points so far (issue 14).
        return Sight(shows, None if shows else frozenset(), None, None, finished or shows)
    player = viewer.player
    assert player is not None
    role = Role(player.role)
    sight = role_visibility(role, roles.get(player.clan, []))
    army_code = player.army.code if player.army else None
    if sight.sees_all_armies:
        orders = player.clan if role is Role.DAIMYO else None
        if role is Role.GENERAL:
            orders = None
        return Sight(True, None, army_code, orders, finished)
    provinces = general_visible_provinces(
        campaign_game_map(tournament.campaign),
        Board.of(tournament.campaign).province_of(army_code or ""),
    )
    return Sight(False, provinces, army_code, None, finished)


def player_row(player: Player) -> dict[str, Any]:
    """A player as every answer shows him: the API, the state, the judge console."""
    return {
        "id": player.pk,
        "name": player.name,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
    }
