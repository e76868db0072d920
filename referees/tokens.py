"""A player's join link: the signed token that identifies him (R1).

Below the services and ``referees.access``, which both read it.
"""

from __future__ import annotations

import secrets

from django.core import signing

from referees.models import Player

TOKEN_SALT = "sl5r.join"


def player_token(player: Player) -> str:
    """The secret in a player's join link (empty when revoked)."""
    if not player.token_nonce:
        return ""
    return signing.Signer(salt=TOKEN_SALT).sign(f"{player.pk}:{player.token_nonce}")


def player_from_token(token: str) -> Player | None:
    """The player a join token belongs to, or None when it is forged, revoked or old."""
    try:
        value = signing.Signer(salt=TOKEN_SALT).unsign(token)
    except signing.BadSignature:
        return None
    pk, _sep, nonce = value.partition(":")
    if not pk.isdigit() or not nonce:
        return None
    # The tournament is read when a caller needs it: the order path, every General's few
    # requests a minute, locks and reads it in its own transaction anyway.
    player = Player.objects.select_related("army").filter(pk=int(pk)).first()
    if player is None or not secrets.compare_digest(player.token_nonce, nonce):
        return None
    return player
