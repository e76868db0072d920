"""Request and response shapes of the API (pydantic, through django-ninja).

Input is checked here for form only (types, ranges, required fields): whether a request
makes sense in the game is the services' decision, and their refusals carry the reason.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils.translation import gettext
from ninja import Field, Schema
from pydantic import ConfigDict, field_validator, model_validator

from referees.services import (
    MAX_BUSHIDO_TURNS,
    MAX_PHASE_SECONDS,
    MAX_TURN_SECONDS,
    MIN_BUSHIDO_TURNS,
    MIN_TURN_SECONDS,
)

ClanId = Literal["crab", "crane", "dragon", "lion", "phoenix", "scorpion", "shadowlands", "unicorn"]
RoleId = Literal["general", "daimyo", "karo"]
Shortfall = Literal["smaller_clans", "exclude_shadowlands"]
ThreeVariant = Literal["generals_and_daimyo", "three_generals"]
MAX_REASON = 2000


class ErrorOut(Schema):
    detail: str = Field(..., description="what went wrong, for a person")
    code: str = Field(..., description="a stable code for programs (e.g. late, not_adjacent)")


# --- Maps and set-up -------------------------------------------------------------------------


class MapIn(Schema):
    slug: str = Field(..., min_length=1, max_length=64, description="the new map's slug")
    data: dict[str, Any] = Field(..., description="the map JSON (provinces, borders …)")


class MapOut(Schema):
    slug: str
    name: str
    provinces: int
    borders: int


class LineupOut(Schema):
    players: int
    excluded_clans: list[str]
    clans: dict[str, list[str]] = Field(..., description="each clan's roles")


class TournamentIn(Schema):
    name: str = Field(..., min_length=1, max_length=200)
    map: str = Field("rokugan", min_length=1, max_length=64, description="the slug of a loaded map")
    map_data: dict[str, Any] | None = Field(
        None,
        description="a map JSON to import first under the slug given in `map` (a new slug)",
    )
    player_count: int = Field(..., ge=1, le=1000)
    turn_seconds: int = Field(15 * 60, ge=MIN_TURN_SECONDS, le=MAX_TURN_SECONDS)
    turns_total: int | None = Field(None, ge=1, le=10_000)
    ends_at: datetime | None = Field(None, description="with its UTC offset")
    clan_abilities: bool = True
    base_hand: Literal[5, 6] = 5
    shortfall: Shortfall = "smaller_clans"
    three_variant: ThreeVariant = "generals_and_daimyo"
    planning_seconds: int = Field(5 * 60, ge=0, le=MAX_PHASE_SECONDS)
    negotiation_seconds: int = Field(15 * 60, ge=0, le=MAX_PHASE_SECONDS)
    time_zone: str = Field("UTC", max_length=64)
    battle_game: Literal["l5r", "bushido"] = Field(
        "l5r", description="the game battles are fought with: L5R (R13) or Bushido (R14)"
    )
    bushido_turns: int = Field(
        4, ge=MIN_BUSHIDO_TURNS, le=MAX_BUSHIDO_TURNS, description="R14: turns of a Bushido battle"
    )

    @field_validator("ends_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("give the time with its UTC offset, e.g. 2030-05-01T18:00:00+03:00")
        if value is not None:
            try:
                value.astimezone(timezone.utc)  # the database stores it in UTC
            except OverflowError:
                raise ValueError("the time in UTC falls outside the years 1 to 9999") from None
        return value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            # Read while the request's language is active: the 422 says it in that language.
            raise ValueError(
                gettext('unknown time zone "%(zone)s" (e.g. Europe/Moscow)') % {"zone": value}
            ) from None
        return value


class TournamentOut(Schema):
    id: int
    name: str
    phase: str
    player_count: int
    map: str
    excluded_clans: list[str]


class TournamentChangeIn(Schema):
    """Settings to change before the start; those left out stay. The map cannot change."""

    # A field this schema does not know (the map, a typo) is refused, not silently dropped.
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=200)
    player_count: int | None = Field(None, ge=1, le=1000)
    turn_seconds: int | None = Field(None, ge=MIN_TURN_SECONDS, le=MAX_TURN_SECONDS)
    turns_total: int | None = Field(None, ge=1, le=10_000, description="null: no limit of turns")
    ends_at: datetime | None = Field(None, description="with its UTC offset; null: no end time")
    clan_abilities: bool | None = None
    base_hand: Literal[5, 6] | None = None
    shortfall: Shortfall | None = None
    three_variant: ThreeVariant | None = None
    planning_seconds: int | None = Field(None, ge=0, le=MAX_PHASE_SECONDS)
    negotiation_seconds: int | None = Field(None, ge=0, le=MAX_PHASE_SECONDS)
    time_zone: str | None = Field(None, max_length=64)
    battle_game: Literal["l5r", "bushido"] | None = None
    bushido_turns: int | None = Field(None, ge=MIN_BUSHIDO_TURNS, le=MAX_BUSHIDO_TURNS)

    @field_validator("ends_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return TournamentIn._aware(value)

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        return None if value is None else TournamentIn._zone(value)

    @model_validator(mode="after")
    def _not_null(self) -> TournamentChangeIn:
        for name in sorted(self.model_fields_set - {"turns_total", "ends_at"}):
            if getattr(self, name) is None:
                raise ValueError(f"{name}: give a value (only turns_total and ends_at may be null)")
        return self

    def changes(self) -> dict[str, Any]:
        """The settings the request gives, null included."""
        return {name: getattr(self, name) for name in self.model_fields_set}


# --- Players ---------------------------------------------------------------------------------


class PlayerIn(Schema):
    name: str = Field(..., min_length=1, max_length=120)
    clan: ClanId
    role: RoleId


class PlayerOut(Schema):
    id: int
    name: str
    clan: str
    role: str
    army: str | None


class PlayerLinkOut(PlayerOut):
    token: str = Field(..., description="the join token; empty when the link is revoked")
    join_url: str | None = Field(..., description="the join link; null when revoked")


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


class JoinIn(Schema):
    token: str = Field(..., min_length=1, max_length=400)


class JoinOut(Schema):
    tournament: int
    player: PlayerOut


# --- The start -------------------------------------------------------------------------------


class PositionsIn(Schema):
    positions: dict[str, str] = Field(
        ..., description="each of the clan's armies (code) and the province it starts in"
    )


# --- Clock -----------------------------------------------------------------------------------


class ExtendIn(Schema):
    seconds: int = Field(..., ge=-MAX_TURN_SECONDS, le=MAX_TURN_SECONDS)


class SwapChoiceIn(Schema):
    on_swap: Literal["advance", "stay"] = Field(
        ..., description="R5.3: advance (fight where the army goes) or stay (where it stands)"
    )


class RedrawIn(Schema):
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)


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
    default_seconds: int = Field(..., description="the time it had left, at least 120")
    full_seconds: int = Field(..., description="a full turn")
    items: list[UndoItemOut]


# --- Orders ----------------------------------------------------------------------------------


class OrderIn(Schema):
    """One order for an army this turn (R4): move along ``path``, hold, or reform."""

    kind: Literal["move", "hold", "reform"]
    path: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="move: the provinces entered, in order (two only for the Unicorn)",
    )
    reform: str = Field("", max_length=64, description="reform: the castle province")
    claim: bool = Field(True, description="take control of the province where the army ends")
    on_swap: Literal["advance", "stay"] = Field(
        "advance", description="Scorpion in a swap conflict: advance or stay (R5.3)"
    )
    turn: int | None = Field(
        None,
        ge=1,
        description="the turn this order is for; refused (409 late) once it has been resolved",
    )

    @field_validator("path")
    @classmethod
    def _provinces(cls, value: list[str]) -> list[str]:
        for i, pid in enumerate(value):
            if not pid or len(pid) > 64:
                raise ValueError(f"path[{i}]: a province id of 1 to 64 characters")
        return value

    @model_validator(mode="after")
    def _complete(self) -> OrderIn:
        if self.kind == "move" and not self.path:
            raise ValueError("path: a move names at least one province")
        if self.kind == "reform" and not self.reform:
            raise ValueError("reform: a reform order names the castle province")
        return self


class OrderOut(Schema):
    army: str
    turn: int
    kind: str
    path: list[str]
    reform: str | None
    claim: bool
    on_swap: str
    given_at: datetime
    given_by: str
    by_judge: bool


# --- Corrections -----------------------------------------------------------------------------


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


class DoneOut(Schema):
    ok: bool = True
    phase: str
    version: int


class LogOut(Schema):
    entries: list[dict[str, Any]]
    after: int = Field(..., description="pass as ?after= to get the entries that follow")
    more: bool


# --- Announcements ---------------------------------------------------------------------------


class AnnouncementIn(Schema):
    text: str = Field(..., max_length=MAX_REASON, description="the message for everyone")


class AnnouncementOut(Schema):
    id: int
    text: str
    at: datetime
    author: str


# --- Written instructions (R1.1) ---------------------------------------------------------------


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


# --- Judges (referees/judging.py) ------------------------------------------------------------


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
