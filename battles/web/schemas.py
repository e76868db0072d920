"""Request and response shapes of the battle tables' API (pydantic, through django-ninja).

The answers are the rows ``battles.selectors`` builds (``battle_detail``, ``battles_visible``).
Keys that only some viewers or only the one-table answer get (``state``, ``table``,
``proposals`` …) are left out for the others, not sent as null: they are declared
``X | None = None`` here and the routes dump with ``exclude_unset``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from referees.http.schemas import MAX_REASON, IsoTime

MAX_ACTION_BYTES = 4096
MAX_ARMY = 64


# --- Bodies ----------------------------------------------------------------------------------


class VoteIn(Schema):
    army: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_ARMY,
        description="the army whose vote this is: a General's own (may be left out); a judge "
        "names it",
    )
    vote: Literal["peace", "battle"] = Field(..., description="R7: peace or battle")


class ActionIn(BaseModel):
    """One action at the table, as the game defines it: ``type`` and its own fields.

    A General's ``by`` is always his army (whatever he sends); a judge acts as ``judge``
    unless he names a seated army in ``by``. (A plain pydantic model: ninja's ``Schema``
    would drop the game's own fields.)
    """

    model_config = ConfigDict(extra="allow")

    type: str = Field(..., min_length=1, max_length=40, description="the action's type")

    @model_validator(mode="after")
    def _small(self) -> ActionIn:
        if len(json.dumps(self.model_dump())) > MAX_ACTION_BYTES:
            raise ValueError(f"an action is at most {MAX_ACTION_BYTES} bytes of JSON")
        return self


class AnswerIn(Schema):
    answer: Literal["confirm", "decline", "withdraw"] = Field(
        ...,
        description="R8, R13: the player a proposal concerns confirms or declines it; its "
        "proposer withdraws it; a judge may do any of these",
    )


class ResultIn(Schema):
    survivors: list[str] = Field(
        ...,
        max_length=64,
        description="R8: the armies the winner lets live; the others who did not lose are "
        "destroyed by his choice",
    )

    @field_validator("survivors")
    @classmethod
    def _codes(cls, value: list[str]) -> list[str]:
        for i, code in enumerate(value):
            if not code or len(code) > MAX_ARMY:
                raise ValueError(f"survivors[{i}]: an army code of 1 to {MAX_ARMY} characters")
        return value


class CorrectionIn(ResultIn):
    kind: Literal["win", "truce"]
    winner: str | None = Field(None, max_length=MAX_ARMY, description="for a win: the army")
    reason: str = Field(..., min_length=1, max_length=MAX_REASON)

    @model_validator(mode="after")
    def _winner(self) -> CorrectionIn:
        if self.kind == "win" and not self.winner:
            raise ValueError("winner: a win names the winning army")
        if self.kind == "truce" and self.winner:
            raise ValueError("winner: a truce has no winner")
        return self


# --- A table as a viewer sees it (battles.selectors) -----------------------------------------


class BattleArmyOut(Schema):
    code: str
    clan: str
    general: str | None = Field(..., description="the General's name; null: none registered")
    vote: str | None = Field(
        ..., description="R7: peace or battle; null: not voted, or not shown to this viewer"
    )
    voted: bool = Field(..., description="whether the army has spoken (shown to everyone)")
    joined_turn: int
    reinforcement: bool
    mine: bool = Field(..., description="the caller's own army")


class BattleParticipantOut(Schema):
    army: str
    clan: str
    force_modifier: int
    honor_bonus: int
    hand_size: int
    small_farms: int = Field(..., description="R7: the Small Farms the General brings")
    notes: list[str]
    reinforcement: bool


class BattleSetupOut(Schema):
    participants: list[BattleParticipantOut]
    seating_chosen_by: list[str] = Field(..., description="R10: the Scorpion armies that choose")


class BattleOutcomeOut(Schema):
    """How the table ended: the game's decision, then (once ended) what the board made of it."""

    kind: str = Field(..., description="win or truce")
    winner: str | None
    losers: list[str]
    reason: str
    survivors: list[str] | None = Field(None, description="once ended: the armies left alive")
    turn: int | None = Field(None, description="once ended: the turn it was decided in")
    control_before: str | None = Field(None, description="once ended: the province's clan before")
    control_after: str | None = Field(None, description="once ended: the province's clan after")
    corrected: bool | None = Field(None, description="a judge corrected the result")


class BattleCasualtyOut(Schema):
    army: str
    destroyed_by: str = Field(..., description="loss or winner (R9)")
    reform_from: int = Field(..., description="R9: the first turn the army may reform in")


class BattleDrawsOut(Schema):
    commitment: str = Field(..., description="R11: the SHA-256 of the table's draw seed")
    seed: str | None = Field(..., description="the seed, once the table is over (R11)")
    steps: list[dict[str, Any]] | None = Field(
        None, description="one table: every draw made at it, oldest first (free-form, R11)"
    )


class BattleYouOut(Schema):
    army: str | None = Field(..., description="the caller's army at the table, if one")
    may_vote: bool
    may_choose_survivors: bool
    may_correct: bool


class BattleProposalOut(Schema):
    id: int
    by: str = Field(..., description="the army that proposes")
    to: str = Field(..., description="the army whose player must consent")
    action: dict[str, Any] = Field(..., description="the action proposed, as the game defines it")
    made_at: IsoTime
    may_answer: bool
    may_withdraw: bool


class BattleProposalAnsweredOut(Schema):
    id: int
    by: str = Field(..., description="the army that proposed")
    to: str = Field(..., description="the army whose player was asked")
    action: dict[str, Any]
    status: Literal["declined", "withdrawn", "lapsed"]
    answered_by: str = Field(..., description="who declined or withdrew it (empty: lapsed)")
    answered_at: IsoTime | None


class BattleOut(Schema):
    """One battle table as the caller may see it (R1.1)."""

    id: int
    province: str
    province_name: str
    status: str
    game: str = Field(..., description="l5r or bushido")
    opened_turn: int
    opened_at: IsoTime
    started_at: IsoTime | None
    ended_at: IsoTime | None
    armies: list[BattleArmyOut]
    setup: BattleSetupOut | None = Field(..., description="null until the table is set up")
    summary: dict[str, Any] | None = Field(
        ..., description="the game's summary of the table (free-form, by game)"
    )
    actions: list[str] = Field(..., description="the action types the caller may send now")
    outcome: BattleOutcomeOut | None
    casualties: list[BattleCasualtyOut] | None
    draws: BattleDrawsOut
    you: BattleYouOut
    proposals: list[BattleProposalOut] | None = Field(
        None, description="one table: the changes waiting for a player's consent (R8, R13)"
    )
    proposals_answered: list[BattleProposalAnsweredOut] | None = Field(
        None, description="one table: the latest proposals that came to nothing, newest first"
    )
    table: dict[str, Any] | None = Field(
        None, description="one table: the game's state without its history (free-form)"
    )
    small_farms_total: int | None = Field(None, description="judges: the table's Small Farms")
    state: dict[str, Any] | None = Field(
        None, description="judges, one table: the game's whole state, draws and history (R11)"
    )
