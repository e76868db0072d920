"""The shapes of ``referees.api.corrections``: a judge's correction of an army or a
province.
"""

from __future__ import annotations

from typing import Literal

from ninja import Field, Schema

from referees.api.schemas.common import ClanId
from referees.http.schemas import MAX_REASON


class ArmyCorrectionIn(Schema):
    army: str = Field(..., min_length=1, max_length=64)
    province: str | None = Field(
        ..., max_length=64, description="where the army now stands; null destroys it"
    )
    destroyed_by: Literal["loss", "winner"] = Field(
        "loss", description="when destroyed: a loss (reform after 2 turns) or the winner's choice"
    )
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)


class ControlCorrectionIn(Schema):
    province: str = Field(..., min_length=1, max_length=64)
    clan: ClanId | None = Field(..., description="the new controller; null for nobody")
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)
