"""The shapes of ``referees.api.players``: a player, his changes, a roster pasted or sent as
CSV.
"""

from __future__ import annotations

from typing import Literal

from ninja import Field, Schema

from referees.api.schemas.common import ClanId, PlayerLinkOut, RoleId
from referees.http.schemas import ErrorOut


class PlayerIn(Schema):
    name: str = Field(..., min_length=1, max_length=120)
    clan: ClanId
    role: RoleId


class PlayerChangeIn(Schema):
    """Any of these: a new name (any phase), another clan and/or role (set-up only, R1)."""

    name: str | None = Field(None, min_length=1, max_length=120)
    clan: ClanId | None = None
    role: RoleId | None = None


class PlayerReplaceIn(Schema):
    name: str = Field(..., min_length=1, max_length=120, description="the newcomer's name")


class RosterIn(Schema):
    lines: str = Field(
        ...,
        max_length=100_000,
        description="one player a line, `name; clan; role` (clan and role may be left out: "
        "R1 proposes them); cells split on `;`, else tabs, else commas; blank lines and "
        "lines starting with `#` skipped. Clans and roles in English or Russian, any case",
    )
    format: Literal["lines", "csv"] = Field(
        "lines", description="csv: `lines` is a CSV file's text (name,clan,role; header optional)"
    )
    dry_run: bool = Field(False, description="true: only the preview, nothing is stored")


class RosterLineOut(Schema):
    line: int = Field(..., description="the line's number in the text")
    name: str
    clan: str | None
    clan_proposed: bool = Field(..., description="R1 proposed the clan (the line left it out)")
    role: str | None
    role_proposed: bool = Field(..., description="R1 proposed the role (the line left it out)")
    army: str | None = Field(..., description="the army code a General would get")
    problems: list[str] = Field(..., description="everything wrong with the line (empty: fine)")


class RosterOut(Schema):
    dry_run: bool
    ok: bool = Field(..., description="something to register and no problem on any line")
    registered_before: int
    player_count: int
    lines: list[RosterLineOut]
    players: list[PlayerLinkOut] = Field(..., description="the players stored (none on a dry run)")


class RosterErrorOut(ErrorOut):
    # A 422 is also what a body the schema refuses gets (code "validation", no lines).
    lines: list[RosterLineOut] = Field(
        default_factory=list, description="every line with its problems (code roster)"
    )
