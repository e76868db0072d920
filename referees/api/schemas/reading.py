"""The shapes of ``referees.api.reading``: the log, the tournament's state as a viewer
sees it, a campaign's map and a played turn as a case file.
"""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema

from referees.api.schemas.calls import CallOut
from referees.api.schemas.checkin import CheckinOut
from referees.api.schemas.common import PlayerOut
from referees.http.schemas import IsoTime

# --- The log ---------------------------------------------------------------------------------


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
