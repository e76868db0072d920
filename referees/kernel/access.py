"""Who may do what: judges, judge API keys, and players' sessions.

The lookups that authentication and permission checks need, kept out of the handlers:
whether a user judges a tournament, which user a judge API key belongs to, and which player
a browser session stands for. A player's session keeps the nonce of the join link it came
from, so reissuing or revoking the link logs every device that used it out.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext, gettext_noop

from referees.kernel.core import TournamentError, record_changed, unit_of_work
from referees.kernel.tokens import PlayerClaim, player_token
from referees.kernel.visibility import clan_roles, player_row
from referees.models import JudgeKey, Player, Tournament
from sl5r.public_url import public_url
from sl5r.rules.roles import Role
from strategic_map.models import Map

JUDGE_KEY_PREFIX = "sl5rj_"
SESSION_PLAYER = "sl5r_player"

# Marked for the catalog; translated where raised (the request's language is active there).
ERROR_NO_TOURNAMENT = gettext_noop("there is no tournament %(id)s")
ERROR_NO_PLAYER = gettext_noop("there is no player %(id)s in this tournament")
ERROR_NO_MAP = gettext_noop(
    'map: there is no map "%(slug)s" (load it with manage.py loadmap, or POST /api/maps)'
)


# --- Tournaments and judges -----------------------------------------------------------------


def tournament_get(*, tournament_id: int) -> Tournament:
    """The tournament with its campaign; ``TournamentError`` 404 when there is none."""
    tournament = Tournament.objects.select_related("campaign").filter(pk=tournament_id).first()
    if tournament is None:
        raise TournamentError(
            gettext(ERROR_NO_TOURNAMENT) % {"id": tournament_id}, code="not_found"
        )
    return tournament


def map_get(*, slug: str) -> Map:
    """A loaded map; ``TournamentError`` 404 when there is none."""
    found = Map.objects.filter(slug=slug).first()
    if found is None:
        raise TournamentError(gettext(ERROR_NO_MAP) % {"slug": slug}, code="not_found")
    return found


def map_exists(*, slug: str) -> bool:
    return Map.objects.filter(slug=slug).exists()


def player_get(*, tournament: Tournament, player_id: int) -> Player:
    """A player of ``tournament``; ``TournamentError`` 404 for another tournament's too."""
    player = (
        Player.objects.select_related("tournament", "army")
        .filter(pk=player_id, tournament=tournament)
        .first()
    )
    if player is None:
        raise TournamentError(gettext(ERROR_NO_PLAYER) % {"id": player_id}, code="not_found")
    return player


def tournament_players(*, tournament: Tournament) -> list[Player]:
    return list(
        Player.objects.filter(tournament=tournament)
        .select_related("army")
        .order_by("clan", "role", "id")
    )


def user_is_active(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def user_may_create_tournament(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """Any active account may set up a tournament and becomes its judge.

    Accounts are made by the site's administrator (there is no sign-up), and players never
    have one: they join with a link. So an account is what makes someone a possible judge.
    """
    return user_is_active(user)


def user_judges(user: AbstractBaseUser | AnonymousUser | None, tournament: Tournament) -> bool:
    """A judge of ``tournament``: one of its judges, or a superuser."""
    if not user_is_active(user):
        return False
    assert user is not None
    if getattr(user, "is_superuser", False):
        return True
    return user.pk is not None and tournament.judges.filter(pk=user.pk).exists()


def player_declares_for(player: Player, tournament: Tournament, clan: str) -> bool:
    """R3.1, R5.3: a clan's Daimyo decides for it; without a Daimyo, any of its Generals."""
    if player.tournament_id != tournament.pk or player.clan != clan:
        return False
    if player.role == Player.Role.DAIMYO:
        return True
    if player.role != Player.Role.GENERAL:
        return False
    return Role.DAIMYO not in clan_roles(tournament).get(clan, [])


def player_join_link(request: HttpRequest, player: Player) -> tuple[str, str | None]:
    """The player's join token and the absolute URL of his link (``""``/None when revoked)."""
    token = player_token(player)
    if not token:
        return "", None
    return token, public_url(request, reverse("join", args=[token]))


def player_link_row(request: HttpRequest, player: Player) -> dict[str, Any]:
    """``player_row`` with his join token and link, for the judges' views of the roster."""
    token, url = player_join_link(request, player)
    return {**player_row(player), "token": token, "join_url": url}


# --- Judge API keys ---------------------------------------------------------------------------


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedKey:
    judge_key: JudgeKey
    key: str
    """The secret itself: shown once, never stored."""


@unit_of_work()
def judge_key_create(*, user: User, label: str = "") -> IssuedKey:
    """A new API key for ``user``; only its SHA-256 is stored."""
    key = JUDGE_KEY_PREFIX + secrets.token_urlsafe(32)
    judge_key = JudgeKey.objects.create(user=user, label=label.strip(), key_hash=_key_hash(key))
    # A key made mid-event must survive the laptop (referees/venue/backups.py).
    record_changed.send(sender=JudgeKey, reason="judge_key")
    return IssuedKey(judge_key=judge_key, key=key)


def judge_key_user(key: str) -> User | None:
    """The active user a (not revoked) API key belongs to, or None."""
    if not key.startswith(JUDGE_KEY_PREFIX):
        return None
    found = (
        JudgeKey.objects.select_related("user")
        .filter(key_hash=_key_hash(key), revoked_at__isnull=True)
        .first()
    )
    if found is None or not found.user.is_active:
        return None
    return found.user


def token_is_judge_key(token: str) -> bool:
    return token.startswith(JUDGE_KEY_PREFIX)


# --- Players' sessions ------------------------------------------------------------------------


def player_session_login(session: SessionBase, player: Player) -> None:
    """Make ``session`` stand for ``player`` (a fresh session key, against fixation)."""
    session.cycle_key()
    session[SESSION_PLAYER] = {"id": player.pk, "nonce": player.token_nonce}


def player_session_logout(session: SessionBase) -> None:
    session.pop(SESSION_PLAYER, None)


def session_claim(session: SessionBase) -> PlayerClaim | None:
    """The player ``session`` says it stands for, not yet read (``player_from_session``
    reads him, and logs the session out when his link changed since)."""
    value = session.get(SESSION_PLAYER)
    if not isinstance(value, dict):
        return None
    pk, nonce = value.get("id"), value.get("nonce")
    if not isinstance(pk, int) or not isinstance(nonce, str) or not nonce:
        return None
    return PlayerClaim(player_id=pk, nonce=nonce)


def player_from_session(session: SessionBase) -> Player | None:
    """The player ``session`` stands for while his join link is unchanged, else None.

    A session whose link was reissued or revoked since is logged out here.
    """
    value = session.get(SESSION_PLAYER)
    if not isinstance(value, dict):
        return None
    pk, nonce = value.get("id"), value.get("nonce")
    player = None
    if isinstance(pk, int) and isinstance(nonce, str) and nonce:
        player = Player.objects.select_related("tournament", "army").filter(pk=pk).first()
    if player is None or not secrets.compare_digest(player.token_nonce, nonce or ""):
        player_session_logout(session)
        return None
    return player
