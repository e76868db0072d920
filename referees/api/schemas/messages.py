"""The shapes of ``referees.api.messages``: announcements and written instructions
(R1.1).
"""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from referees.http.schemas import MAX_REASON


class AnnouncementIn(Schema):
    text: str = Field(..., max_length=MAX_REASON, description="the message for everyone")


class AnnouncementOut(Schema):
    id: int
    text: str
    at: datetime
    author: str


class InstructionIn(Schema):
    text: str = Field(
        ...,
        # The service refuses more than 2000 characters with a 400 that says so; this only
        # keeps absurd bodies out.
        max_length=20_000,
        description="the instruction, at most 2000 characters",
    )
    to: int | None = Field(
        None, description="the id of one General of the clan; null: all the clan's Generals"
    )


class InstructionOut(Schema):
    id: int
    clan: str
    author: str = Field(..., description="the Daimyo's name")
    author_id: int
    to: str = Field(..., description="the General's name, or all")
    to_id: int | None = Field(..., description="the General's id; null: all the clan's Generals")
    text: str
    at: datetime
    turn: int | None = Field(..., description="the turn open when it was sent")
