"""The shapes of ``referees.api.checkin``: who has come, stand-ins, shrinking the line-up."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema


class CheckinOut(Schema):
    id: int
    name: str
    clan: str
    role: str
    army: str | None
    checked_in_at: datetime | None = Field(
        ..., description="when his join link first logged a device in, or a judge marked him"
    )
    marked_by: str | None = Field(..., description="the judge who marked him present by hand")


class PresenceIn(Schema):
    present: bool = Field(..., description="true: present (plays on paper); false: take back")


class StandInIn(Schema):
    name: str = Field(..., max_length=2_000, description="who takes the seat")


class ShrinkIn(Schema):
    players: list[int] = Field(..., max_length=48, description="the ids of who did not come")


class ShrinkPersonOut(Schema):
    id: int
    name: str
    clan: str
    role: str
    army: str | None


class ShrinkSeatOut(ShrinkPersonOut):
    role_before: str


class ShrinkOut(Schema):
    players_before: int
    players_after: int
    leaving: list[ShrinkPersonOut]
    changes: list[ShrinkSeatOut] = Field(..., description="who changes role (and takes an army)")
    clans: dict[str, list[ShrinkSeatOut]]
    problem: str = Field(..., description="why R1 (b) does not allow it; empty when it does")
    ok: bool
