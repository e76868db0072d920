"""The shapes of ``referees.api.clock``: extending, redrawing, reopening and undoing turns,
the big screen's gong.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from referees.http.schemas import MAX_REASON
from referees.services import (
    MAX_TURN_SECONDS,
)


class ExtendIn(Schema):
    seconds: int = Field(..., ge=-MAX_TURN_SECONDS, le=MAX_TURN_SECONDS)


class RedrawIn(Schema):
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)


class ReopenIn(Schema):
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)


class GongIn(Schema):
    on: bool = Field(..., strict=True, description="true: the big screen sounds its gong")


class UndoIn(Schema):
    reason: str = Field("", max_length=MAX_REASON)
    turn: int | None = Field(
        None,
        ge=1,
        description="the last turn played, as the judge saw it; refused (409 stale) once it "
        "has been undone, so that a repeated request undoes nothing more",
    )
    seconds: int | None = Field(
        None,
        description="the reopened turn's time, 60 to 14400 seconds (refused 400 otherwise); "
        "by default the time it had left when it was resolved, at least 2 minutes",
    )


class UndoItemOut(Schema):
    kind: Literal["order", "paper_order", "correction", "battle"]
    action: str
    who: str = Field(..., description="a player's name and clan, a judge, or the clock")
    at: datetime
    text: str
    army: str = ""
    province: str = ""


class UndoPreviewOut(Schema):
    """What undoing the last resolved turn would discard, and its clock (R4)."""

    turn: int = Field(..., description="the turn that reopens")
    default_seconds: int = Field(
        ..., description="what it reopens with: the time it had left, or 120 if under 60"
    )
    left_seconds: int = Field(..., description="the time it really had left when resolved")
    problem: str = Field(..., description="why the undo would be refused now; empty: it would not")
    full_seconds: int = Field(..., description="a full turn")
    items: list[UndoItemOut]
