"""Set-up: a tournament's settings, its players and their join links (R1–R3)."""

from __future__ import annotations

import secrets
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from referees.kernel.core import (
    Actor,
    TournamentError,
    announce,
    log_write,
    record_changed,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.lineups import (
    lineup_refuse_unless_fits,
    lineup_shape_for,
    registered_roles,
    tournament_lineup,
    tournament_shape,
)
from referees.kernel.names import name_checked, name_key
from referees.kernel.tokens import player_token
from referees.models import Player, Tournament
from sl5r.public_url import site_url_choose
from sl5r.rules.clans import CLANS, is_clan
from sl5r.rules.mapgraph import GameMap, map_from_dict
from sl5r.rules.roles import (
    Lineup,
    Role,
    lineup_seating_check,
)
from sl5r.venue import LAST_SITE_FILE
from strategic_map.clans import clan_name
from strategic_map.models import Map
from strategic_map.selectors import campaign_game_map
from strategic_map.services import (
    army_create,
    campaign_create,
    campaign_settings_change,
)

Phase = Tournament.Phase
DEFAULT_TURNS = 14  # R3.5: 3-4 hours of 15-minute turns
MIN_TURN_SECONDS = 1
MAX_TURN_SECONDS = 4 * 3600
MAX_PHASE_SECONDS = 24 * 3600  # clan planning, negotiation
NAME_MAX_LENGTH = 200  # Tournament.name
MIN_BUSHIDO_TURNS = 1
MAX_BUSHIDO_TURNS = 10  # as sl5r.rules.games.bushido allows


# --- Set-up ---------------------------------------------------------------------------------


def lineup_refuse_unseated(
    game_map: GameMap, generals: Mapping[str, int], excluded_clans: Sequence[str]
) -> None:
    """R1, R3.2: refuse (422 ``map_seating``) a line-up the map cannot seat, naming the clan."""
    short = lineup_seating_check(game_map, generals, excluded_clans=frozenset(excluded_clans))
    if not short:
        return
    problems = []
    for clan in short:
        if clan.homes < clan.generals:
            problems.append(
                _(
                    "the %(clan)s have %(homes)s home provinces on this map for %(generals)s "
                    "Generals, and each army starts in a home province of its own (R1, R3.2)"
                )
                % {"clan": clan.clan, "homes": clan.homes, "generals": clan.generals}
            )
        else:
            problems.append(
                _(
                    "the %(clan)s have no castle among their home provinces on this map: "
                    "armies start in castle provinces first (R3.2) and reform in one (R9)"
                )
                % {"clan": clan.clan}
            )
    raise refusal(
        _("map: the map cannot seat this line-up: %(problems)s")
        % {"problems": "; ".join(problems)},
        "map_seating",
    )


@dataclass(frozen=True, kw_only=True)
class TournamentSettings:
    """What a judge chooses for a tournament (R1, R3, R10, R14); changeable until the start.

    ``clan_abilities`` and ``base_hand`` are the campaign's; the others the tournament's.
    """

    name: str
    player_count: int
    turn_seconds: int
    turns_total: int | None
    ends_at: datetime | None
    clan_abilities: bool
    base_hand: int
    shortfall: str
    three_variant: str
    planning_seconds: int
    negotiation_seconds: int
    time_zone: str
    battle_game: str
    bushido_turns: int


SETTINGS: tuple[str, ...] = tuple(f.name for f in dataclass_fields(TournamentSettings))
CAMPAIGN_SETTINGS = frozenset({"clan_abilities", "base_hand"})


def tournament_settings(tournament: Tournament) -> TournamentSettings:
    campaign = tournament.campaign
    return TournamentSettings(
        **{
            name: getattr(campaign if name in CAMPAIGN_SETTINGS else tournament, name)
            for name in SETTINGS
        }
    )


def _settings_checked(
    settings: TournamentSettings, *, game_map: GameMap, now: datetime
) -> tuple[TournamentSettings, Lineup]:
    """The settings as stored (the name trimmed, the default number of turns) and the
    line-up R1 gives for them; else the refusal of the first wrong one, named first.

    Creating a tournament and changing it before the start both check through here.
    """
    name = name_checked(settings.name, field="name")
    if not name:
        raise refusal(_("name: give the tournament a name"))
    if len(name) > NAME_MAX_LENGTH:
        raise refusal(_("name: at most %(max)s characters") % {"max": NAME_MAX_LENGTH})
    if not MIN_TURN_SECONDS <= settings.turn_seconds <= MAX_TURN_SECONDS:
        raise refusal(
            _("turn_seconds: between %(min)s and %(max)s")
            % {"min": MIN_TURN_SECONDS, "max": MAX_TURN_SECONDS}
        )
    if settings.base_hand not in (5, 6):
        raise refusal(_("base_hand: the base starting hand is 5 or 6 (R10)"))
    if settings.turns_total is not None and settings.turns_total < 1:
        raise refusal(_("turns_total: at least one turn"))
    ends_at = settings.ends_at
    if ends_at is not None and timezone.is_naive(ends_at):
        raise refusal(_("ends_at: give the end time with its time zone offset"))
    if settings.time_zone not in zoneinfo.available_timezones():
        raise refusal(_('time_zone: unknown time zone "%(zone)s"') % {"zone": settings.time_zone})
    if ends_at is not None and ends_at <= now:
        raise refusal(_("ends_at: the end time has already passed"))
    for field, seconds in (
        ("planning_seconds", settings.planning_seconds),
        ("negotiation_seconds", settings.negotiation_seconds),
    ):
        if not 0 <= seconds <= MAX_PHASE_SECONDS:
            raise refusal(
                _("%(field)s: between 0 and %(max)s seconds")
                % {"field": field, "max": MAX_PHASE_SECONDS}
            )
    if settings.shortfall not in Tournament.Shortfall.values:
        raise refusal(_('shortfall: "smaller_clans" or "exclude_shadowlands" (R1)'))
    if settings.three_variant not in Tournament.ThreeVariant.values:
        raise refusal(_('three_variant: "generals_and_daimyo" or "three_generals" (R1)'))
    if settings.battle_game not in Tournament.BattleGame.values:
        raise refusal(_('battle_game: "l5r" or "bushido" (R14)'))
    if not MIN_BUSHIDO_TURNS <= settings.bushido_turns <= MAX_BUSHIDO_TURNS:
        raise refusal(
            _("bushido_turns: between %(min)s and %(max)s turns (R14)")
            % {"min": MIN_BUSHIDO_TURNS, "max": MAX_BUSHIDO_TURNS}
        )
    try:
        lineup = tournament_lineup(
            player_count=settings.player_count,
            shortfall=settings.shortfall,
            three_variant=settings.three_variant,
        )
    except TournamentError as error:
        # R1 decides which counts it can seat; the judge changes the count.
        raise refusal(
            _("player_count: %(problem)s") % {"problem": error.message}, error.code
        ) from error
    lineup_refuse_unseated(
        game_map,
        {clan: lineup.generals(clan) for clan in lineup.clans},
        sorted(lineup.excluded_clans),
    )
    turns_total = settings.turns_total
    if turns_total is None and ends_at is None:
        turns_total = DEFAULT_TURNS
    return replace(settings, name=name, turns_total=turns_total), lineup


def _tournament_values(settings: TournamentSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in SETTINGS if name not in CAMPAIGN_SETTINGS}


def _log_value(value: object) -> object:
    return value.isoformat() if isinstance(value, datetime) else value


@unit_of_work()
def tournament_create(
    *,
    name: str,
    judge: User,
    game_map: Map,
    player_count: int,
    now: datetime,
    turn_seconds: int = 15 * 60,
    turns_total: int | None = None,
    ends_at: datetime | None = None,
    clan_abilities: bool = True,
    base_hand: int = 5,
    shortfall: str = Tournament.Shortfall.SMALLER_CLANS,
    three_variant: str = Tournament.ThreeVariant.GENERALS_AND_DAIMYO,
    planning_seconds: int = 5 * 60,
    negotiation_seconds: int = 15 * 60,
    time_zone: str = "UTC",
    battle_game: str = Tournament.BattleGame.L5R,
    bushido_turns: int = 4,
) -> Tournament:
    """A new tournament in set-up, with its campaign on a copy of ``game_map`` (R1, R3)."""
    settings, lineup = _settings_checked(
        TournamentSettings(
            name=name,
            player_count=player_count,
            turn_seconds=turn_seconds,
            turns_total=turns_total,
            ends_at=ends_at,
            clan_abilities=clan_abilities,
            base_hand=base_hand,
            shortfall=shortfall,
            three_variant=three_variant,
            planning_seconds=planning_seconds,
            negotiation_seconds=negotiation_seconds,
            time_zone=time_zone,
            battle_game=battle_game,
            bushido_turns=bushido_turns,
        ),
        game_map=map_from_dict(game_map.data),
        now=now,
    )
    campaign = campaign_create(
        game_map=game_map,
        clan_abilities=settings.clan_abilities,
        excluded_clans=sorted(lineup.excluded_clans),
        base_hand=settings.base_hand,
    )
    tournament = Tournament.objects.create(campaign=campaign, **_tournament_values(settings))
    tournament.judges.add(judge)
    log_write(
        tournament,
        actor=Actor.of_user(judge),
        action="tournament_created",
        now=now,
        map=game_map.slug,
        player_count=settings.player_count,
        turn_seconds=settings.turn_seconds,
        turns_total=settings.turns_total,
        ends_at=_log_value(settings.ends_at),
        clan_abilities=settings.clan_abilities,
        base_hand=settings.base_hand,
        excluded_clans=sorted(lineup.excluded_clans),
        battle_game=settings.battle_game,
        bushido_turns=settings.bushido_turns,
    )
    return tournament


@unit_of_work()
def tournament_update(
    *, tournament_id: int, actor: Actor, now: datetime, **fields: Any
) -> Tournament:
    """Change settings (``TournamentSettings`` names) during set-up only (409 ``phase``).

    Checked as at creation, and against the players already registered: they must still fit
    the line-up R1 gives (R1), and none may belong to a clan the new settings leave out
    (R1 a). The map stays. Logged with each changed setting, before and after.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(
            _("the tournament has started: its settings can no longer be changed"), "phase"
        )
    unknown = sorted(set(fields) - set(SETTINGS))
    if unknown:
        raise refusal(_("%(field)s: not a setting of a tournament") % {"field": unknown[0]})
    campaign = tournament.campaign
    before = tournament_settings(tournament)
    after, lineup = _settings_checked(
        replace(before, **fields), game_map=campaign_game_map(campaign), now=now
    )
    excluded = sorted(lineup.excluded_clans)
    changes: dict[str, dict[str, object]] = {
        name: {"from": _log_value(getattr(before, name)), "to": _log_value(getattr(after, name))}
        for name in SETTINGS
        if getattr(before, name) != getattr(after, name)
    }
    if excluded != sorted(campaign.excluded_clans):
        changes["excluded_clans"] = {"from": sorted(campaign.excluded_clans), "to": excluded}
    if not changes:
        return tournament
    players = list(tournament.players.all())
    left_out = sorted({p.clan for p in players} & lineup.excluded_clans)
    if left_out:
        raise refusal(
            _(
                "shortfall: players of the %(clans)s are registered, so the clan cannot be "
                "left out (R1 a)"
            )
            % {"clans": ", ".join(clan_name(c) for c in left_out)},
            "lineup",
        )
    lineup_refuse_unless_fits(
        lineup_shape_for(
            player_count=after.player_count,
            shortfall=after.shortfall,
            three_variant=after.three_variant,
        ),
        registered_roles(players),
    )
    values = _tournament_values(after)
    for name, value in values.items():
        setattr(tournament, name, value)
    tournament.save(update_fields=[name for name in values if name in changes])
    campaign_settings_change(
        campaign=campaign,
        clan_abilities=after.clan_abilities,
        base_hand=after.base_hand,
        excluded_clans=excluded,
    )
    log_write(tournament, actor=actor, action="tournament_updated", now=now, changes=changes)
    announce(tournament, "settings")
    return tournament


def tournament_clans(tournament: Tournament) -> tuple[str, ...]:
    excluded = set(tournament.campaign.excluded_clans)
    return tuple(c for c in CLANS if c not in excluded)


PLAYER_NAME_MAX = Player._meta.get_field("name").max_length or 120


def player_name_checked(*, tournament: Tournament, name: str, player: Player | None = None) -> str:
    """The name to store, refused when empty, too long, or another player's of the tournament
    (the join sheet and the log name players: two of one name could not be told apart)."""
    cleaned = name_checked(name, field="name")
    if not cleaned:
        raise refusal(_("name: give the player's name"))
    if len(cleaned) > PLAYER_NAME_MAX:
        raise refusal(_("name: at most %(max)s characters") % {"max": PLAYER_NAME_MAX})
    key = name_key(cleaned)
    others = (
        tournament.players.all() if player is None else tournament.players.exclude(pk=player.pk)
    )
    for other in others:
        if name_key(other.name) == key:
            raise refusal(
                _("name: %(name)s is already registered") % {"name": other.name}, "name_taken"
            )
    return cleaned


@unit_of_work()
def player_register(
    *,
    tournament: Tournament,
    name: str,
    clan: str,
    role: str,
    actor: Actor,
    now: datetime,
) -> Player:
    """Register a player with his clan and role; a General gets his army (R1).

    Refuses a line-up R1 does not allow, naming the reason.
    """
    tournament = tournament_lock(tournament.pk)
    if tournament.phase != Phase.SETUP:
        raise refusal(_("players are registered during set-up only"), "phase")
    name = player_name_checked(tournament=tournament, name=name)
    if not is_clan(clan):
        raise refusal(_('clan: unknown clan "%(clan)s"') % {"clan": clan})
    if clan not in tournament_clans(tournament):
        raise refusal(_("clan: the %(clan)s are not in this tournament") % {"clan": clan})
    try:
        new_role = Role(role)
    except ValueError:
        raise refusal(
            _('role: unknown role "%(role)s" (general, daimyo or karo)') % {"role": role}
        ) from None
    players = list(tournament.players.all())
    if len(players) >= tournament.player_count:
        raise refusal(
            _("the tournament is for %(count)s players and all are registered")
            % {"count": tournament.player_count},
            "full",
        )
    roles_by_clan = registered_roles(players)
    roles_by_clan.setdefault(clan, []).append(new_role)
    lineup_refuse_unless_fits(tournament_shape(tournament), roles_by_clan)
    roles = roles_by_clan[clan]
    army = None
    if new_role is Role.GENERAL:
        number = sum(1 for r in roles if r is Role.GENERAL)
        lineup_refuse_unseated(
            campaign_game_map(tournament.campaign),
            {clan: number},
            tournament.campaign.excluded_clans,
        )
        army = army_create(campaign=tournament.campaign, code=f"{clan}-{number}", clan=clan)
    player = Player.objects.create(
        tournament=tournament,
        name=name,
        clan=clan,
        role=new_role.value,
        army=army,
        token_nonce=secrets.token_urlsafe(16),
        token_issued_at=now,
    )
    log_write(
        tournament,
        actor=actor,
        action="player_registered",
        now=now,
        player=player.pk,
        name=player.name,
        clan=clan,
        role=new_role.value,
        army=army.code if army else None,
    )
    return player


@unit_of_work()
def player_token_reissue(*, player: Player, actor: Actor, now: datetime) -> str:
    """A new join link for ``player``; the old one stops working."""
    player.token_nonce = secrets.token_urlsafe(16)
    player.token_issued_at = now
    player.save(update_fields=["token_nonce", "token_issued_at"])
    log_write(
        player.tournament, actor=actor, action="join_link_reissued", now=now, player=player.pk
    )
    record_changed.send(sender=Player, reason="join_link")
    return player_token(player)


@unit_of_work()
def player_token_revoke(*, player: Player, actor: Actor, now: datetime) -> None:
    player.token_nonce = ""
    player.save(update_fields=["token_nonce"])
    log_write(player.tournament, actor=actor, action="join_link_revoked", now=now, player=player.pk)
    record_changed.send(sender=Player, reason="join_link")


VENUE = Actor(label="the venue")
"""Who noticed the venue's address change, as the log shows it."""


def venue_site_changed(*, before: str, after: str, now: datetime, actor: Actor = VENUE) -> int:
    """The venue now serves at ``after``, the links printed before carried ``before``
    (issue 31): every unfinished tournament's log says so, for its console. Returns how
    many tournaments were told."""
    told = 0
    for pk in Tournament.objects.exclude(phase=Tournament.Phase.FINISHED).values_list(
        "pk", flat=True
    ):
        with unit_of_work():
            tournament = tournament_lock(pk)
            log_write(
                tournament, actor=actor, action="site_changed", now=now, before=before, after=after
            )
            announce(tournament, "log")
        told += 1
    return told


def venue_address_choose(*, site: str, actor: Actor, now: datetime) -> str:
    """A judge chooses which of the laptop's addresses the links carry (a laptop on two
    networks took the one the phones cannot reach). Kept in the venue folder until changed,
    used at once by every page and sheet; every console's log says to print the join sheet
    again. Returns the address."""
    if not settings.SL5R_VENUE:
        raise refusal(_("only a venue laptop (make venue) chooses its address"), "not_venue")
    try:
        before = site_url_choose(site)
    except ValueError:
        raise refusal(
            _("site: %(site)s is not one of this laptop's addresses: %(addresses)s")
            % {"site": site, "addresses": ", ".join(settings.SL5R_SITE_CANDIDATES)}
        ) from None
    if before != site:
        # The next start compares with this one, not with the address before the choice.
        last = Path(settings.SL5R_VENUE_DIR) / LAST_SITE_FILE
        last.write_text(site + "\n", encoding="utf-8")
        venue_site_changed(before=before, after=site, now=now, actor=actor)
    return site
