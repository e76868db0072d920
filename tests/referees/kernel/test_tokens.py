"""A join token's signature (referees/kernel/tokens.py): checked once per key, never trusted past
a change of the site's keys."""

from __future__ import annotations

from typing import Any

from django.core import signing

from referees.kernel.tokens import TOKEN_SALT, PlayerClaim, token_claim


def signed(value: str, key: str) -> str:
    return signing.Signer(key=key, salt=TOKEN_SALT).sign(value)


def test_a_token_claims_its_player_and_nonce(settings: Any) -> None:
    settings.SECRET_KEY = "k" * 50
    assert token_claim(signed("7:abc", "k" * 50)) == PlayerClaim(player_id=7, nonce="abc")
    assert token_claim(signed("7:abc", "k" * 50)) == PlayerClaim(player_id=7, nonce="abc")


def test_a_token_checked_under_an_old_key_is_refused_once_the_key_changes(settings: Any) -> None:
    settings.SECRET_KEY = "old" * 20
    token = signed("7:abc", "old" * 20)
    assert token_claim(token) is not None
    settings.SECRET_KEY = "new" * 20
    assert token_claim(token) is None
    # Kept as a fallback key, it is honoured again, as Django's signing honours it.
    settings.SECRET_KEY_FALLBACKS = ["old" * 20]
    assert token_claim(token) == PlayerClaim(player_id=7, nonce="abc")


def test_a_forged_or_malformed_token_claims_nothing(settings: Any) -> None:
    settings.SECRET_KEY = "k" * 50
    assert token_claim(signed("7:abc", "other" * 10)) is None
    assert token_claim(signed("seven:abc", "k" * 50)) is None
    assert token_claim(signed("7:", "k" * 50)) is None
    assert token_claim("no signature at all") is None
