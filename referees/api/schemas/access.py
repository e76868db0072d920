"""The shapes of ``referees.api.access``: joining by link, who am I, the CSRF token."""

from __future__ import annotations

from ninja import Field, Schema

from referees.api.schemas.common import PlayerOut


class JoinIn(Schema):
    token: str = Field(..., min_length=1, max_length=400)


class JoinOut(Schema):
    tournament: int
    player: PlayerOut


class MeOut(Schema):
    authenticated_as: str = Field(..., description="bearer, session or public")
    user: str | None
    player: PlayerOut | None
    tournament: int | None


class CsrfOut(Schema):
    csrf_token: str
