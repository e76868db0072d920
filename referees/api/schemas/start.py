"""The shapes of ``referees.api.start``: starting positions, the venue's address."""

from __future__ import annotations

from ninja import Field, Schema


class PositionsIn(Schema):
    positions: dict[str, str] = Field(
        ..., description="each of the clan's armies (code) and the province it starts in"
    )


class VenueAddressIn(Schema):
    site: str = Field(..., max_length=300)
