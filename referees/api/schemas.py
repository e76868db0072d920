"""Request and response shapes of the API (pydantic, through django-ninja).

Input is checked here for form only (types, ranges, required fields): whether a request
makes sense in the game is the services' decision, and their refusals carry the reason.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils.translation import gettext
from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

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

# A time as the selectors write it (``datetime.isoformat()``, e.g.
# ``2030-05-01T18:00:00.123456+00:00``): a string, so that the answer keeps it to the
# microsecond and with its offset (a ``datetime`` field would be re-encoded as ``...Z``).
IsoTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


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


class VenueAddressIn(Schema):
    site: str = Field(..., max_length=300)


class ExtendIn(Schema):
    seconds: int = Field(..., ge=-MAX_TURN_SECONDS, le=MAX_TURN_SECONDS)


class SwapChoiceIn(Schema):
    on_swap: Literal["advance", "stay"] = Field(
        ..., description="R5.3: advance (fight where the army goes) or stay (where it stands)"
    )


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


# A plain pydantic model, not ninja's ``Schema``: the answer to every order is built as a
# dict, and ``Schema`` reads a dict through its Django-object adapter, ten times pydantic's
# own validation (15 µs against 1.5). The API document is the same.
class OrderOut(BaseModel):
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


class LogEntryOut(Schema):
    id: int
    at: IsoTime
    by: str = Field(..., description="who did it: a judge, a player, or the clock")
    action: str
    turn: int | None
    reason: str
    data: Any = Field(..., description="what the entry records, by action (free-form)")


class LogPageEntryOut(LogEntryOut):
    text: str = Field(..., description="the entry as a sentence in the reader's language")
    kind: str


class LogExportTournamentOut(Schema):
    id: int
    name: str


class LogExportOut(Schema):
    tournament: LogExportTournamentOut
    exported_at: IsoTime
    entries: list[LogEntryOut]


class LogOut(Schema):
    entries: list[LogPageEntryOut]
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


# --- Calls for a judge --------------------------------------------------------------------------


class CallIn(Schema):
    reason: str = Field(
        "other",
        max_length=20,
        description="rules (a rules question), dispute, late (a late arrival), device, other",
    )
    text: str = Field("", max_length=2_000, description="a few words, at most 200 characters")


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


# --- Judges (referees/services/judges.py) ---------------------------------------------------------


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


# --- What a viewer sees: the tournament's state (referees.reading.state.tournament_state) ---
#
# Keys that only some viewers get (``scores``, ``reform``, ``battle`` …) are left out of the
# answer for the others, not sent as null: they are declared ``X | None = None`` here.


class ClockOut(Schema):
    phase: str
    paused: bool
    deadline: IsoTime | None = Field(..., description="null while paused or between phases")
    remaining: int | float | None = Field(
        ..., description="seconds left, as the server counts them; null without a deadline"
    )
    server_time: IsoTime


class StateTournamentOut(Schema):
    id: int
    name: str
    version: int = Field(..., description="grows with every change")
    turn: int = Field(..., description="the open turn, else the last played one; 0 before")
    ended_after_turn: int | None = Field(
        ..., description="once over: the last turn played (0: none was)"
    )
    commitment: str | None = Field(
        ..., description="R11: the SHA-256 of the open turn's draw seed (null: no open turn)"
    )
    turns_total: int | None
    ends_at: IsoTime | None
    turn_seconds: int
    clan_abilities: bool
    base_hand: int
    excluded_clans: list[str]
    time_zone: str
    screen_gong: bool = Field(..., description="the big screen sounds a gong at each deadline")
    clock: ClockOut


class StateViewerOut(Schema):
    kind: Literal["judge", "player", "public"]
    sees_all_armies: bool
    player: PlayerOut | None = Field(..., description="the player the caller is, if one")


class StateArmyOut(Schema):
    id: str
    clan: str
    province: str | None = Field(..., description="null: destroyed")
    in_battle: bool
    destroyed: bool
    destroyed_in_turn: int | None
    destroyed_by: str | None = Field(..., description="loss or winner (R9)")
    reform_from: int | None = Field(None, description="destroyed: the first turn it may reform")


class StateOrderOut(Schema):
    army: str
    kind: str
    path: list[str]
    reform: str | None
    claim: bool
    on_swap: str
    given_at: IsoTime
    given_by: str
    by_judge: bool


class MeetingOut(Schema):
    province: str
    armies: list[str]
    new: bool


class ScoreOut(Schema):
    home_provinces: int
    other_provinces: int
    castles: int
    total: int


class DrawOut(Schema):
    """One draw of the turn, as the engine records it (docs/adjudication.md)."""

    provinces: list[str]
    moving_from: str | None
    method: str
    choices: list[str] | None = None
    source: str | None = None
    armies: list[str] | None = None
    on_swap: str | None = None


class RejectionOut(Schema):
    turn: int
    reason_code: str
    reason: str = Field(..., description="the reason, in the reader's language")


class ReformOut(Schema):
    from_turn: int = Field(..., description="R9: the first turn the army may reform in")
    provinces: list[str] = Field(..., description="the castles it could reform in now")
    home_castles: list[str]
    sees_map: bool = Field(
        ..., description="false: the castles as far as he may know (R1.1), not as they stand"
    )


class CurrentBattleOut(Schema):
    id: int
    status: str
    province: str


class StateAnnouncementOut(Schema):
    id: int
    text: str
    at: IsoTime


class StateInstructionOut(Schema):
    id: int
    clan: str
    author: str
    author_id: int
    to: str
    to_id: int | None
    text: str
    at: IsoTime
    turn: int | None


class ScoreHistoryOut(Schema):
    turn: int = Field(..., description="0: the start of the game")
    scores: dict[str, int]


class FlagOut(Schema):
    """A deadline that passed while the server was not serving, not yet ruled on."""

    id: int = Field(..., description="clear it with POST …/clock/flags/{id}/ruled")
    turn: int | None
    at: IsoTime
    text: str = Field(..., description="what happened and the orders around it, in words")


class StateOut(Schema):
    """What the caller may see of the tournament now (R1.1)."""

    tournament: StateTournamentOut
    viewer: StateViewerOut
    visible_provinces: list[str] | None = Field(..., description="null: every province")
    armies: list[StateArmyOut]
    control: dict[str, str | None] = Field(..., description="each visible province's clan")
    orders: list[StateOrderOut] = Field(..., description="the open turn's orders he may see")
    meetings: list[MeetingOut]
    scores: dict[str, ScoreOut] | None = Field(
        None, description="R12, each clan's points: for judges, and everyone once it is over"
    )
    small_farms: dict[str, int] | None = Field(
        None, description="R7: the Small Farms each clan's Generals bring to a battle now"
    )
    last_draws: list[DrawOut] | None = Field(None, description="judges: the last turn's draws")
    flags: list[FlagOut] | None = Field(
        None, description="judges: missed deadlines not yet ruled on"
    )
    declared_clans: dict[str, bool] | None = Field(
        None, description="R3.1: whether each clan has declared (a player: his own clan)"
    )
    last_order: RejectionOut | None = Field(
        None, description="a General: why his last order was rejected, if it was"
    )
    reform: ReformOut | None = Field(None, description="the General of a destroyed army")
    clan_reforms: dict[str, ReformOut] | None = Field(
        None, description="a Daimyo or Karo: where each destroyed army of his clan may reform"
    )
    battle: CurrentBattleOut | None = Field(
        None, description="a player: the open table his army sits at"
    )
    announcements: list[StateAnnouncementOut]
    instructions: list[StateInstructionOut] | None = Field(
        None, description="a player: the written instructions he may read (R1.1)"
    )
    score_history: list[ScoreHistoryOut] | None = Field(
        None, description="each clan's points after every turn, when ``scores`` is shown"
    )
    call: CallOut | None = Field(
        None, description="a player: his own call for a judge, open or closed lately (R1.1)"
    )
    calls: list[CallOut] | None = Field(
        None, description="judges: the open calls for a judge, then those closed lately"
    )
    checkin: list[CheckinOut] | None = Field(
        None, description="judges, before the turns: who has checked in, those missing first"
    )


# --- Who am I, CSRF --------------------------------------------------------------------------


class MeOut(Schema):
    authenticated_as: str = Field(..., description="bearer, session or public")
    user: str | None
    player: PlayerOut | None
    tournament: int | None


class CsrfOut(Schema):
    csrf_token: str


# --- A map as JSON (sl5r.rules.mapgraph.map_from_dict, docs/adjudication.md "Maps") --------
#
# Answered as stored, which is as imported: the keys a map leaves out are left out here too.


class MapProvinceOut(Schema):
    id: str
    name: str | None = Field(None, description="left out: the id")
    home_clan: str | None = None
    castle: str | bool | None = Field(
        None, description="the castle's name; true: named after the province; null/false: none"
    )
    impassable: bool | None = None
    x: int | float | None = None
    y: int | float | None = None


class CampaignMapOut(Schema):
    """The map JSON a campaign is played on (R2)."""

    # The import reads these two as text whatever they are (map_from_dict calls str()).
    id: Any = Field(None, description="the map's id, a string")
    name: Any = Field(None, description="the map's name, a string")
    width: int | float | None = None
    height: int | float | None = None
    clans: list[str] | None = Field(None, description="the clans of the map; left out: all")
    provinces: list[MapProvinceOut]
    borders: list[list[str]] | None = Field(None, description="pairs of province ids")


# --- A played turn as a case file (sl5r.rules.casefile, docs/adjudication.md) -------------


class CaseSettingsOut(Schema):
    clan_abilities: bool
    excluded_clans: list[str]


class CaseArmyOut(Schema):
    id: str
    clan: str
    province: str | None = Field(..., description="null: destroyed")
    in_battle: bool | None = None
    destroyed_in_turn: int | None = None
    destroyed_by: str | None = Field(None, description="loss or winner (R9)")


class CaseOrderOut(Schema):
    army: str
    move: list[str] | None = None
    reform: str | None = None
    claim: bool | None = Field(None, description="left out: true")
    on_swap: str | None = Field(None, description="stay or advance; left out: advance")
    late: bool | None = None


class CaseResultArmyOut(Schema):
    id: str
    clan: str
    province: str | None
    destroyed: bool
    in_battle: bool


class CaseResultOrderOut(Schema):
    army: str
    outcome: str
    province: str | None
    reason: str | None = Field(None, description="a rejected order: `code: sentence`")


class CaseResultDrawOut(Schema):
    provinces: list[str]
    moving_from: str


class CaseReinforcementOut(Schema):
    province: str
    armies: list[str]


class CaseExpectOut(Schema):
    """What the turn gave when it was played: a replay (``adjudicate --check``) must match."""

    armies: list[CaseResultArmyOut]
    orders: list[CaseResultOrderOut]
    meetings: list[MeetingOut]
    reinforcements: list[CaseReinforcementOut]
    control: dict[str, str | None]
    scores: dict[str, int]
    draws: list[CaseResultDrawOut]


class CaseFileOut(Schema):
    """A played turn in the case format (format 1): ``manage.py adjudicate --check`` on it
    replays the turn and confirms ``expect``."""

    format: int
    description: str
    map: str | CampaignMapOut = Field(..., description='"rokugan" or the inline map')
    settings: CaseSettingsOut
    turn: int
    control: dict[str, str | None] = Field(
        ..., description="the provinces whose controller differs from the map's start"
    )
    armies: list[CaseArmyOut]
    orders: list[CaseOrderOut]
    draws: dict[str, str] = Field(
        ..., description="each swap conflict drawn (`a|b`): the province whose side moved"
    )
    seed: int | None = None
    draw_seed: str | None = Field(None, description="R11: the turn's revealed seed")
    commitment: str | None = Field(None, description="R11: the SHA-256 published before")
    orders_digest: str | None = Field(None, description="R11: the digest of the orders")
    expect: CaseExpectOut
