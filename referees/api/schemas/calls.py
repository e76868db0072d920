"""The shapes of ``referees.api.calls``: calls for a judge."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema


class CallIn(Schema):
    reason: str = Field(
        "other",
        max_length=20,
        description="rules (a rules question), dispute, late (a late arrival), device, other",
    )
    text: str = Field("", max_length=2_000, description="a few words, at most 200 characters")


class CallMineOut(Schema):
    call: CallOut | None = Field(..., description="null: no call open or closed lately")


class CallCloseIn(Schema):
    note: str = Field(
        "", max_length=2_000, description="what was decided, for the caller; at most 200 characters"
    )


class CallOut(Schema):
    id: int
    player: str = Field(..., description="the caller's name")
    player_id: int
    clan: str
    role: str
    army: str | None
    province: str | None = Field(..., description="his table's province, else his army's")
    battle: int | None = Field(..., description="the battle table he called from, if any")
    reason: str
    text: str
    at: datetime
    taken_by: str | None = Field(..., description="the judge on his way")
    taken_at: datetime | None
    closed_at: datetime | None
    withdrawn: bool = Field(..., description="closed by the caller himself")
    closed_by: str | None
    note: str
