"""The schema primitives every JSON API of the site shares (``referees.api``,
``battles.web``): the error body, a time as the selectors write it, the longest reason.
"""

from __future__ import annotations

from typing import Annotated

from ninja import Field, Schema

MAX_REASON = 2000

# A time as the selectors write it (``datetime.isoformat()``, e.g.
# ``2030-05-01T18:00:00.123456+00:00``): a string, so that the answer keeps it to the
# microsecond and with its offset (a ``datetime`` field would be re-encoded as ``...Z``).
IsoTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class ErrorOut(Schema):
    detail: str = Field(..., description="what went wrong, for a person")
    code: str = Field(..., description="a stable code for programs (e.g. late, not_adjacent)")
