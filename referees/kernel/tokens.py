"""A player's join link: the signed token that identifies him (R1).

Below the services and ``referees.kernel.access``, which both read it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.core import signing

from referees.models import Player

TOKEN_SALT = "sl5r.join"


def player_token(player: Player) -> str:
    """The secret in a player's join link (empty when revoked)."""
    if not player.token_nonce:
        return ""
    return signing.Signer(salt=TOKEN_SALT).sign(f"{player.pk}:{player.token_nonce}")


@dataclass(frozen=True)
class PlayerClaim:
    """Who a request says it acts for, signed by the site: a player's id and his link's
    nonce. Whether that link still stands is read under the tournament's lock by the one
    who acts on it (the order path's frame), or at once by ``player_from_token``."""

    player_id: int
    nonce: str


def token_claim(token: str) -> PlayerClaim | None:
    """The claim a join token makes, or None when it is forged; nothing is read.

    Every order of a General checks the same token's signature again: the answer is kept
    for the keys it was checked with. A signature's validity is all that is kept; whether
    the link still stands (revoked, replaced) is read by the caller each time.
    """
    return _token_claim(token, settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


@lru_cache(maxsize=1024)
def _token_claim(token: str, key: str, fallbacks: tuple[str, ...]) -> PlayerClaim | None:
    try:
        value = signing.Signer(key=key, fallback_keys=list(fallbacks), salt=TOKEN_SALT).unsign(
            token
        )
    except signing.BadSignature:
        return None
    pk, _sep, nonce = value.partition(":")
    if not pk.isdigit() or not nonce:
        return None
    return PlayerClaim(player_id=int(pk), nonce=nonce)


def player_from_token(token: str) -> Player | None:
    """The player a join token belongs to, or None when it is forged, revoked or old."""
    claim = token_claim(token)
    if claim is None:
        return None
    pk, nonce = claim.player_id, claim.nonce
    # The tournament is read when a caller needs it: the order path, every General's few
    # requests a minute, locks and reads it in its own transaction anyway.
    player = Player.objects.select_related("army").filter(pk=pk).first()
    if player is None or not secrets.compare_digest(player.token_nonce, nonce):
        return None
    return player
