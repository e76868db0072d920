"""The shapes of ``referees.api.judges``: a tournament's judges and invitations (the writes
are ``referees.services.judges``).
"""

from __future__ import annotations

from ninja import Field, Schema


class JudgeIn(Schema):
    username: str = Field(..., min_length=1, max_length=150)
    invite: bool = Field(
        False,
        description="false: add the existing account of this name; true: make a new account "
        "and answer its one-time sign-in link (shown once)",
    )


class JudgeOut(Schema):
    id: int
    username: str
    pending: bool = Field(..., description="invited, and has not chosen a password yet")
    sign_in_url: str | None = Field(
        None, description="an invitation's one-time sign-in link: in this answer only"
    )
