"""The shapes of ``referees.api.setup``: maps, line-ups, a tournament's settings."""

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

Shortfall = Literal["smaller_clans", "exclude_shadowlands"]
ThreeVariant = Literal["generals_and_daimyo", "three_generals"]


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
