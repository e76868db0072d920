"""The form of a tournament's settings, on the new-tournament page and on its settings page.

It checks what a browser sends for form only (numbers, a map file that is a JSON map, a
time in the chosen zone), as ``referees.api.schemas.setup`` does for the API; whether the
settings make sense is ``referees.services``'s decision, and ``add_refusal`` shows each of its
refusals next to the field it names. An uploaded map is read by the rules engine
(``map_from_dict``), as ``manage.py loadmap`` and the API read it, and each problem found
is one line, named as ``loadmap`` names it (``file: place: problem``).
"""

from __future__ import annotations

import json
import zoneinfo
from datetime import datetime
from decimal import Decimal
from functools import cache
from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from referees.kernel.core import TournamentError
from referees.models import Tournament
from referees.services import (
    DEFAULT_TURNS,
    MAX_BUSHIDO_TURNS,
    MAX_PHASE_SECONDS,
    MAX_TURN_SECONDS,
    MIN_BUSHIDO_TURNS,
    MIN_TURN_SECONDS,
    NAME_MAX_LENGTH,
    TournamentSettings,
)
from sl5r.rules.errors import MapError
from sl5r.rules.mapgraph import map_from_dict
from strategic_map.models import Map

MAX_MAP_BYTES = 2 * 1024 * 1024
DATETIME_LOCAL = "%Y-%m-%dT%H:%M"
ENDS_BY_TURNS = "turns"
ENDS_BY_TIME = "time"
ENDS_BY_EITHER = "either"
MINUTE = Decimal(60)
UTC = zoneinfo.ZoneInfo("UTC")

# The service names a setting in seconds where the form asks for minutes.
FORM_FIELD_OF = {
    "turn_seconds": "turn_minutes",
    "planning_seconds": "planning_minutes",
    "negotiation_seconds": "negotiation_minutes",
}


@cache
def time_zones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


def default_time_zone() -> str:
    """The site's own zone (settings.TIME_ZONE) when it is a real one, else UTC."""
    zone = str(settings.TIME_ZONE or "UTC")
    return zone if zone in time_zones() else "UTC"


def _minutes(seconds: int) -> Decimal:
    minutes = (Decimal(seconds) / MINUTE).quantize(Decimal("0.01"))
    # "15", not "15.00"; "1.5" stays.
    return minutes.quantize(Decimal(1)) if minutes == minutes.to_integral_value() else minutes


def _seconds(minutes: Decimal) -> int:
    return int((minutes * MINUTE).to_integral_value())


class LocalDateTimeField(forms.DateTimeField):
    """A ``datetime-local`` value, kept naive: it is a time in the zone the form chooses."""

    input_formats = [DATETIME_LOCAL, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
    widget = forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_LOCAL)

    def to_python(self, value: Any) -> datetime | None:
        if value in self.empty_values:
            return None
        if isinstance(value, datetime):
            return value.replace(tzinfo=None)
        text = str(value).strip()
        for pattern in self.input_formats:
            try:
                return datetime.strptime(text, pattern)
            except ValueError:
                continue
        raise ValidationError(self.error_messages["invalid"], code="invalid")

    def prepare_value(self, value: Any) -> Any:
        return value.strftime(DATETIME_LOCAL) if isinstance(value, datetime) else value


def _radio() -> forms.RadioSelect:
    return forms.RadioSelect()


def _minutes_field(label: Any, *, minimum: Decimal, maximum: Decimal, initial: int) -> Any:
    return forms.DecimalField(
        label=label,
        min_value=minimum,
        max_value=maximum,
        max_digits=7,
        decimal_places=2,
        initial=_minutes(initial),
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
    )


class TournamentForm(forms.Form):
    """Every setting the API takes. With ``editing`` (the settings page) there is no map."""

    name = forms.CharField(label=_("Name"), max_length=NAME_MAX_LENGTH)
    map = forms.ChoiceField(label=_("Map"), required=False)
    map_file = forms.FileField(
        label=_("Or upload a map (JSON)"),
        required=False,
        help_text=_("The map file as manage.py loadmap reads it; it replaces the choice above."),
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    map_slug = forms.SlugField(
        label=_("Short name (slug) of the uploaded map"),
        max_length=64,
        required=False,
        help_text=_("Letters, digits, hyphens. Left empty: made from the map's id or name."),
    )
    player_count = forms.IntegerField(label=_("Players"), min_value=1, max_value=1000, initial=16)
    shortfall = forms.ChoiceField(
        label=_("When the count is not a multiple of 8 (R1)"),
        choices=[
            (
                Tournament.Shortfall.SMALLER_CLANS,
                _("(b) some clans have one member fewer"),
            ),
            (
                Tournament.Shortfall.EXCLUDE_SHADOWLANDS,
                _("(a) leave the Shadowlands out"),
            ),
        ],
        initial=Tournament.Shortfall.SMALLER_CLANS,
        widget=_radio(),
    )
    three_variant = forms.ChoiceField(
        label=_("Three per clan (24 players, R1)"),
        choices=Tournament.ThreeVariant.choices,
        initial=Tournament.ThreeVariant.GENERALS_AND_DAIMYO,
        widget=_radio(),
    )
    turn_minutes = _minutes_field(
        _("Turn length (minutes)"),
        minimum=_minutes(MIN_TURN_SECONDS),
        maximum=_minutes(MAX_TURN_SECONDS),
        initial=15 * 60,
    )
    ends_by = forms.ChoiceField(
        label=_("The game ends"),
        choices=[
            (ENDS_BY_TURNS, _("after a number of turns")),
            (ENDS_BY_TIME, _("at a time")),
            (ENDS_BY_EITHER, _("after a number of turns or at a time, whichever comes first")),
        ],
        initial=ENDS_BY_TURNS,
        widget=_radio(),
    )
    turns_total = forms.IntegerField(
        label=_("Number of turns"),
        min_value=1,
        max_value=10_000,
        initial=DEFAULT_TURNS,
        required=False,
    )
    ends_at = LocalDateTimeField(
        label=_("End time"),
        required=False,
        help_text=_("In the tournament's time zone."),
    )
    planning_minutes = _minutes_field(
        _("Clan planning (minutes)"),
        minimum=Decimal(0),
        maximum=_minutes(MAX_PHASE_SECONDS),
        initial=5 * 60,
    )
    negotiation_minutes = _minutes_field(
        _("Negotiation (minutes)"),
        minimum=Decimal(0),
        maximum=_minutes(MAX_PHASE_SECONDS),
        initial=15 * 60,
    )
    clan_abilities = forms.BooleanField(
        label=_("Clan abilities (R10)"), required=False, initial=True
    )
    base_hand = forms.TypedChoiceField(
        label=_("Base starting hand (R10)"),
        choices=[(5, "5"), (6, "6")],
        coerce=int,
        initial=5,
        widget=_radio(),
    )
    battle_game = forms.ChoiceField(
        label=_("Battles are fought with"),
        choices=Tournament.BattleGame.choices,
        initial=Tournament.BattleGame.L5R,
        widget=_radio(),
    )
    bushido_turns = forms.IntegerField(
        label=_("Turns of a Bushido battle (R14)"),
        min_value=MIN_BUSHIDO_TURNS,
        max_value=MAX_BUSHIDO_TURNS,
        initial=4,
    )
    time_zone = forms.CharField(
        label=_("Time zone"),
        max_length=64,
        help_text=_("Clocks and the end time are shown in it."),
    )

    def __init__(self, *args: Any, editing: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.editing = editing
        self.map_data: dict[str, Any] | None = None
        self.map_source = ""
        if editing:
            for name in ("map", "map_file", "map_slug"):
                del self.fields[name]
        else:
            maps = [(m.slug, m.name) for m in Map.objects.order_by("name", "slug")]
            field = self.fields["map"]
            assert isinstance(field, forms.ChoiceField)
            field.choices = maps
            field.initial = "rokugan" if any(slug == "rokugan" for slug, _n in maps) else None
        zone = self.fields["time_zone"]
        zone.widget = forms.Select(choices=[(z, z) for z in time_zones()])
        zone.initial = default_time_zone()

    # --- Checks of form --------------------------------------------------------------------

    def clean_map_file(self) -> UploadedFile[bytes] | None:
        """An uploaded map: a JSON object the rules engine reads as a map (R2)."""
        upload = self.cleaned_data.get("map_file")
        if not upload:
            return None
        assert isinstance(upload, UploadedFile)
        source = PurePath(upload.name or "map.json").name
        raw = upload.read(MAX_MAP_BYTES + 1)
        if len(raw) > MAX_MAP_BYTES:
            raise ValidationError(
                gettext("%(file)s: larger than %(max)s MB")
                % {"file": source, "max": MAX_MAP_BYTES // (1024 * 1024)}
            )
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise ValidationError(
                gettext("%(file)s: not a text file in UTF-8") % {"file": source}
            ) from None
        except (ValueError, RecursionError) as error:
            # As loadmap: a syntax error, an integer of over 4300 digits, or nesting too deep.
            problem = "nested too deep" if isinstance(error, RecursionError) else str(error)
            raise ValidationError(
                gettext("%(file)s: not valid JSON: %(problem)s")
                % {"file": source, "problem": problem}
            ) from None
        if not isinstance(data, dict):
            raise ValidationError(
                gettext("%(file)s: the map must be a JSON object") % {"file": source}
            )
        # Read even when the engine refuses it: its slug is checked too, each problem shown.
        self.map_data = data
        self.map_source = source
        try:
            map_from_dict(data)
        except MapError as error:
            # The engine names the first problem, "place: problem", as loadmap prints it.
            raise ValidationError(f"{source}: {error}") from None
        return upload

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not self.editing:
            self._clean_map(cleaned)
        zone_name = cleaned.get("time_zone")
        zone = None
        if zone_name:
            try:
                zone = zoneinfo.ZoneInfo(zone_name)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                self.add_error(
                    "time_zone",
                    gettext('unknown time zone "%(zone)s" (e.g. Europe/Moscow)')
                    % {"zone": zone_name},
                )
        ends_by = cleaned.get("ends_by")
        if ends_by == ENDS_BY_TIME:
            cleaned["turns_total"] = None
        elif cleaned.get("turns_total") is None and "turns_total" not in self.errors:
            self.add_error("turns_total", gettext("give the number of turns"))
        if ends_by == ENDS_BY_TURNS:
            cleaned["ends_at"] = None
            return cleaned
        ends_at = cleaned.get("ends_at")
        if ends_at is None and "ends_at" not in self.errors:
            self.add_error("ends_at", gettext("give the time the game ends"))
        elif ends_at is not None and zone is not None:
            try:
                cleaned["ends_at"] = ends_at.replace(tzinfo=zone).astimezone(UTC)
            except OverflowError:
                self.add_error(
                    "ends_at", gettext("the time in UTC falls outside the years 1 to 9999")
                )
        return cleaned

    def _clean_map(self, cleaned: dict[str, Any]) -> None:
        if self.map_data is not None:
            slug = cleaned.get("map_slug") or self._derived_slug()
            if "map_slug" in self.errors:
                return
            if not slug:
                self.add_error("map_slug", gettext("give the map a short name (slug)"))
            elif Map.objects.filter(slug=slug).exists():
                self.add_error(
                    "map_slug",
                    gettext('there is a map "%(slug)s" already; give the new map another slug')
                    % {"slug": slug},
                )
            cleaned["map_slug"] = slug
        elif not cleaned.get("map") and "map_file" not in self.errors:
            self.add_error("map", gettext("choose a map, or upload one"))

    def _derived_slug(self) -> str:
        """From the map's id (as loadmap takes it), else its name, else the file's name."""
        data = self.map_data or {}
        for value in (data.get("id"), data.get("name"), PurePath(self.map_source).stem):
            if isinstance(value, str) and slugify(value):
                return slugify(value)[:64].strip("-")
        return ""

    # --- For the services ------------------------------------------------------------------

    def settings_values(self) -> dict[str, Any]:
        """The cleaned settings under the services' names (``TournamentSettings``)."""
        data = self.cleaned_data
        return {
            "name": data["name"],
            "player_count": data["player_count"],
            "turn_seconds": _seconds(data["turn_minutes"]),
            "turns_total": data["turns_total"],
            "ends_at": data["ends_at"],
            "clan_abilities": data["clan_abilities"],
            "base_hand": data["base_hand"],
            "shortfall": data["shortfall"],
            "three_variant": data["three_variant"],
            "planning_seconds": _seconds(data["planning_minutes"]),
            "negotiation_seconds": _seconds(data["negotiation_minutes"]),
            "time_zone": data["time_zone"],
            "battle_game": data["battle_game"],
            "bushido_turns": data["bushido_turns"],
        }

    def add_refusal(self, error: TournamentError) -> None:
        """A service's refusal ("field: what is wrong") next to the field it names."""
        field, sep, rest = error.message.partition(": ")
        if field == "line-up":
            # R1 against the players already registered: the count and its choices decide.
            self.add_error(
                "player_count",
                gettext("the players already registered do not fit: %(problems)s")
                % {"problems": rest},
            )
            return
        if field == "map" and not self.editing:
            field = "map_file" if self.map_data is not None else "map"
        field = FORM_FIELD_OF.get(field, field)
        if sep and field in self.fields:
            self.add_error(field, rest)
        else:
            self.add_error(None, error.message)


def _ends_by(turns_total: int | None, ends_at: datetime | None) -> str:
    if ends_at is None:
        return ENDS_BY_TURNS
    return ENDS_BY_TIME if turns_total is None else ENDS_BY_EITHER


def form_initial(settings_now: TournamentSettings) -> dict[str, Any]:
    """The settings page's form, filled with a tournament's settings (times in its zone)."""
    ends_at = settings_now.ends_at
    if ends_at is not None:
        ends_at = timezone.localtime(ends_at, zoneinfo.ZoneInfo(settings_now.time_zone))
    return {
        "name": settings_now.name,
        "player_count": settings_now.player_count,
        "shortfall": settings_now.shortfall,
        "three_variant": settings_now.three_variant,
        "turn_minutes": _minutes(settings_now.turn_seconds),
        "ends_by": _ends_by(settings_now.turns_total, ends_at),
        "turns_total": settings_now.turns_total,
        "ends_at": ends_at.replace(tzinfo=None) if ends_at is not None else None,
        "planning_minutes": _minutes(settings_now.planning_seconds),
        "negotiation_minutes": _minutes(settings_now.negotiation_seconds),
        "clan_abilities": settings_now.clan_abilities,
        "base_hand": settings_now.base_hand,
        "battle_game": settings_now.battle_game,
        "bushido_turns": settings_now.bushido_turns,
        "time_zone": settings_now.time_zone,
    }
