"""Running a tournament: set-up, players, the start, the clock, orders and corrections.

Every change goes through a service here. Each one runs in a transaction, writes its line
in the tournament's log (R11) and announces itself after commit (``events``). Views, API
handlers, consumers and tasks validate input and call these; ``TournamentError`` carries a
message for the person who asked, shown with a 4xx.
"""

from __future__ import annotations

import logging
import secrets
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core import signing
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from battles.models import TableSnapshot
from referees.backups import backup_on_commit
from referees.clock import order_settle, schedule_deadline, settle_hold, tick_due_at
from referees.kernel import (
    CLOCK,
    Actor,
    TournamentError,
    announce,
    log_write,
    refusal,
    tournament_lock,
)
from referees.lineups import (
    lineup_refuse_unless_fits,
    lineup_shape_for,
    registered_roles,
    tournament_lineup,
    tournament_shape,
)
from referees.models import Announcement, Instruction, LogEntry, Player, Tournament
from referees.texts import order_refusal_text, start_problem_text
from sl5r.rules.clans import CLANS, is_clan
from sl5r.rules.mapgraph import GameMap, map_from_dict
from sl5r.rules.roles import (
    Lineup,
    Role,
    lineup_seating_check,
    role_visibility,
    starting_positions_problems,
)
from strategic_map.clans import clan_name
from strategic_map.models import Army, Campaign, Map, Order, Turn
from strategic_map.selectors import campaign_game_map, campaign_open_turn, turn_current_orders
from strategic_map.services import (
    OrderRefused,
    army_create,
    board_place,
    board_set_control,
    campaign_create,
    campaign_settings_change,
    order_submit,
    turn_open,
    turn_resolve,
    turn_seed_renew,
    turn_undo,
)

log = logging.getLogger(__name__)

Phase = Tournament.Phase
DEFAULT_TURNS = 14  # R3.5: 3-4 hours of 15-minute turns
MIN_TURN_SECONDS = 1
MAX_TURN_SECONDS = 4 * 3600
MAX_PHASE_SECONDS = 24 * 3600  # clan planning, negotiation
NAME_MAX_LENGTH = 200  # Tournament.name
MIN_BUSHIDO_TURNS = 1
MAX_BUSHIDO_TURNS = 10  # as sl5r.rules.games.bushido allows
TOKEN_SALT = "sl5r.join"


# --- Set-up ---------------------------------------------------------------------------------


def _refuse_unseated(
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
        422,
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
    name = settings.name.strip()
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
            _("player_count: %(problem)s") % {"problem": error.message}, error.code, error.status
        ) from error
    _refuse_unseated(
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


@transaction.atomic
def tournament_create(
    *,
    name: str,
    judge: AbstractBaseUser,
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


@transaction.atomic
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
            _("the tournament has started: its settings can no longer be changed"), "phase", 409
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


def player_name_spaced(name: str) -> str:
    """A name as stored: inner runs of spaces made one, none at the ends."""
    return " ".join(name.split())


def player_name_key(name: str) -> str:
    """Two names are the same player's when they differ only in case, spacing or ё/е."""
    return player_name_spaced(name).casefold().replace("ё", "е")


def player_name_checked(*, tournament: Tournament, name: str, player: Player | None = None) -> str:
    """The name to store, refused when empty, too long, or another player's of the tournament
    (the join sheet and the log name players: two of one name could not be told apart)."""
    cleaned = player_name_spaced(name)
    if not cleaned:
        raise refusal(_("name: give the player's name"))
    if len(cleaned) > PLAYER_NAME_MAX:
        raise refusal(_("name: at most %(max)s characters") % {"max": PLAYER_NAME_MAX})
    key = player_name_key(cleaned)
    others = (
        tournament.players.all() if player is None else tournament.players.exclude(pk=player.pk)
    )
    for other in others:
        if player_name_key(other.name) == key:
            raise refusal(
                _("name: %(name)s is already registered") % {"name": other.name}, "name_taken"
            )
    return cleaned


@transaction.atomic
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
        raise refusal(_("players are registered during set-up only"), "phase", 409)
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
            409,
        )
    roles_by_clan = registered_roles(players)
    roles_by_clan.setdefault(clan, []).append(new_role)
    lineup_refuse_unless_fits(tournament_shape(tournament), roles_by_clan)
    roles = roles_by_clan[clan]
    army = None
    if new_role is Role.GENERAL:
        number = sum(1 for r in roles if r is Role.GENERAL)
        _refuse_unseated(
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


def player_token(player: Player) -> str:
    """The secret in a player's join link (empty when revoked)."""
    if not player.token_nonce:
        return ""
    return signing.Signer(salt=TOKEN_SALT).sign(f"{player.pk}:{player.token_nonce}")


def player_from_token(token: str) -> Player | None:
    """The player a join token belongs to, or None when it is forged, revoked or old."""
    try:
        value = signing.Signer(salt=TOKEN_SALT).unsign(token)
    except signing.BadSignature:
        return None
    pk, _sep, nonce = value.partition(":")  # not "_": that is gettext here
    if not pk.isdigit() or not nonce:
        return None
    # The tournament is read when a caller needs it: the order path, every General's few
    # requests a minute, locks and reads it in its own transaction anyway.
    player = Player.objects.select_related("army").filter(pk=int(pk)).first()
    if player is None or not secrets.compare_digest(player.token_nonce, nonce):
        return None
    return player


@transaction.atomic
def player_token_reissue(*, player: Player, actor: Actor, now: datetime) -> str:
    """A new join link for ``player``; the old one stops working."""
    player.token_nonce = secrets.token_urlsafe(16)
    player.token_issued_at = now
    player.save(update_fields=["token_nonce", "token_issued_at"])
    log_write(
        player.tournament, actor=actor, action="join_link_reissued", now=now, player=player.pk
    )
    backup_on_commit(reason="join_link")
    return player_token(player)


@transaction.atomic
def player_token_revoke(*, player: Player, actor: Actor, now: datetime) -> None:
    player.token_nonce = ""
    player.save(update_fields=["token_nonce"])
    log_write(player.tournament, actor=actor, action="join_link_revoked", now=now, player=player.pk)
    backup_on_commit(reason="join_link")


# --- The start (R3) -----------------------------------------------------------------------


@transaction.atomic
def tournament_start(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """End set-up: the clans' planning time begins (R3.1)."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(_("the tournament has already started"), "phase", 409)
    # R1: the whole line-up the count gives, every problem named (409 ``lineup``).
    lineup_refuse_unless_fits(
        tournament_shape(tournament), registered_roles(tournament.players.all()), complete=True
    )
    generals: dict[str, int] = {}
    for player in tournament.players.filter(role=Role.GENERAL.value):
        generals[player.clan] = generals.get(player.clan, 0) + 1
    _refuse_unseated(
        campaign_game_map(tournament.campaign), generals, tournament.campaign.excluded_clans
    )
    _enter_phase(tournament, Phase.PLANNING, now, tournament.planning_seconds)
    log_write(tournament, actor=actor, action="planning_started", now=now)
    announce(tournament, "phase", phase=tournament.phase)
    return tournament


def _enter_phase(tournament: Tournament, phase: str, now: datetime, seconds: float | None) -> None:
    tournament.phase = phase
    tournament.paused_remaining = None
    tournament.deadline = now + timedelta(seconds=seconds) if seconds is not None else None
    tournament.save(update_fields=["phase", "deadline", "paused_remaining"])
    schedule_deadline(tournament)


def _undeclared_clans(tournament: Tournament) -> list[str]:
    placed = tournament.campaign.board.get("armies", {})
    clans = {
        a.clan for a in Army.objects.filter(campaign=tournament.campaign) if a.code not in placed
    }
    return sorted(clans)


@transaction.atomic
def start_positions_declare(
    *,
    tournament_id: int,
    clan: str,
    positions: Mapping[str, str],
    actor: Actor,
    now: datetime,
) -> Tournament:
    """A clan declares where each of its armies starts (R3.1-R3.2), checked as a whole."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase not in (Phase.PLANNING, Phase.DEPLOYMENT):
        raise refusal(
            _("starting positions are declared after set-up, before negotiation"), "phase", 409
        )
    campaign = tournament.campaign  # locked with the tournament (see tournament_lock)
    armies = {a.code: a for a in Army.objects.filter(campaign=campaign, clan=clan)}
    if not armies:
        raise refusal(_("clan: the %(clan)s have no armies in this tournament") % {"clan": clan})
    if set(positions) != set(armies):
        missing = sorted(set(armies) - set(positions))
        extra = sorted(set(positions) - set(armies))
        parts = []
        if missing:
            parts.append(_("no province for %(armies)s") % {"armies": ", ".join(missing)})
        if extra:
            parts.append(_("not armies of the clan: %(armies)s") % {"armies": ", ".join(extra)})
        raise refusal(_("positions: %(problems)s") % {"problems": "; ".join(parts)})
    game_map = campaign_game_map(campaign)
    codes = sorted(armies)
    problems = starting_positions_problems(
        game_map,
        clan,
        [positions[code] for code in codes],
        excluded_clans=frozenset(campaign.excluded_clans),
    )
    if problems:
        worded = [start_problem_text(game_map, clan, problem, codes) for problem in problems]
        raise refusal(_("positions: %(problems)s") % {"problems": "; ".join(worded)}, "positions")
    for code, army in armies.items():
        board_place(campaign=campaign, army=army, province=positions[code])
    campaign.save(update_fields=["board"])
    log_write(
        tournament,
        actor=actor,
        action="start_positions",
        now=now,
        clan=clan,
        positions=dict(positions),
    )
    if tournament.phase == Phase.DEPLOYMENT and not _undeclared_clans(tournament):
        _enter_phase(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
        log_write(tournament, actor=CLOCK, action="negotiation_started", now=now)
    announce(tournament, "positions", clan=clan, phase=tournament.phase)
    return tournament


@transaction.atomic
def tournament_advance(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """A judge moves the start on to its next step without waiting for the timer."""
    tournament = tournament_lock(tournament_id)
    _advance(tournament, actor, now)
    return tournament


def _advance(tournament: Tournament, actor: Actor, now: datetime) -> None:
    if tournament.phase == Phase.PLANNING:
        if _undeclared_clans(tournament):
            _enter_phase(tournament, Phase.DEPLOYMENT, now, None)
            log_write(tournament, actor=actor, action="deployment_started", now=now)
        else:
            _enter_phase(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
            log_write(tournament, actor=actor, action="negotiation_started", now=now)
    elif tournament.phase == Phase.DEPLOYMENT:
        undeclared = _undeclared_clans(tournament)
        if undeclared:
            raise refusal(
                _("these clans have not declared their starting positions: %(clans)s")
                % {"clans": ", ".join(undeclared)},
                "positions",
                409,
            )
        _enter_phase(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
        log_write(tournament, actor=actor, action="negotiation_started", now=now)
    elif tournament.phase == Phase.NEGOTIATION:
        _enter_phase(tournament, Phase.RUNNING, now, tournament.turn_seconds)
        opened = turn_open(
            campaign=tournament.campaign, number=1, now=now, deadline=tournament.deadline
        )
        log_write(
            tournament,
            actor=actor,
            action="turn_opened",
            now=now,
            turn=1,
            commitment=opened.commitment,
        )
    else:
        raise refusal(
            _("nothing to advance in phase %(phase)s") % {"phase": tournament.phase}, "phase", 409
        )
    announce(tournament, "phase", phase=tournament.phase)


# --- The clock (R4) -------------------------------------------------------------------------


def due_tournament_ids(*, now: datetime) -> list[int]:
    """Tournaments whose clock has run out: the sweep's work list.

    A running turn is due ``order_settle()`` after its deadline, as ``tick_due_at`` says.
    """
    return list(
        Tournament.objects.filter(paused_remaining__isnull=True)
        .filter(
            Q(phase=Phase.RUNNING, deadline__lte=now - order_settle())
            | Q(phase__in=[Phase.PLANNING, Phase.NEGOTIATION], deadline__lte=now)
        )
        .values_list("pk", flat=True)
    )


def clock_tick(*, tournament_id: int, now: datetime | None = None) -> bool:
    """Do what is due for one tournament, if anything; True when something was done.

    Every clock calls this: the in-process clock, the Celery task scheduled for the
    deadline and the Celery beat sweep. The tournament row is locked and the due check is
    made inside the transaction, and a turn is resolved through ``turn_resolve``'s
    conditional update, so however many of them fire, each step happens once.

    ``now`` is the time of the tick; the clocks leave it out, and it is then read once the
    row is locked. A time read before waiting for the lock (another clock resolving, a
    judge's change, the other tournaments of a sweep) would open the next turn in the past
    and cut the wait off its length.
    """
    return clock_tick_outcome(tournament_id=tournament_id, now=now) == TICK_DONE


TICK_DONE, TICK_NOTHING, TICK_HELD = "done", "nothing", "held"


def clock_tick_outcome(*, tournament_id: int, now: datetime | None = None) -> str:
    """``clock_tick``, telling apart a turn held by waiting orders (``TICK_HELD``: try again
    shortly) from nothing due (``TICK_NOTHING``) and a step taken (``TICK_DONE``).

    A held turn is seen before the tournament is locked, so that the clock does not queue
    for the lock with the orders it waits for, and again under the lock.
    """
    unlocked = Tournament.objects.filter(pk=tournament_id).first()
    if unlocked is not None and not unlocked.paused:
        seen_at = now or timezone.now()
        due_at = tick_due_at(unlocked)
        if due_at is not None and due_at <= seen_at and settle_hold(unlocked, seen_at):
            return TICK_HELD
    with transaction.atomic():
        tournament = tournament_lock(tournament_id)
        if now is None:
            now = timezone.now()
        due_at = tick_due_at(tournament)
        if tournament.paused or due_at is None or due_at > now:
            return TICK_NOTHING
        if tournament.phase == Phase.RUNNING:
            if settle_hold(tournament, now):
                return TICK_HELD
            return TICK_DONE if _resolve_current(tournament, actor=CLOCK, now=now) else TICK_NOTHING
        if tournament.phase in (Phase.PLANNING, Phase.NEGOTIATION):
            _advance(tournament, CLOCK, now)
            return TICK_DONE
        return TICK_NOTHING


def clock_sweep(*, now: datetime | None = None) -> int:
    """Tick every due tournament; returns how many steps were taken.

    Without ``now`` (the clocks), each tick reads the time once its tournament is locked.
    """
    steps = 0
    for pk in due_tournament_ids(now=now or timezone.now()):
        # One tournament that cannot be ticked must not hold up the others.
        try:
            steps += clock_tick(tournament_id=pk, now=now)
        except TournamentError:
            continue
        except Exception:
            log.exception("clock tick of tournament %s failed", pk)
    return steps


def _game_over(tournament: Tournament, number: int, now: datetime) -> bool:
    if tournament.turns_total is not None and number >= tournament.turns_total:
        return True
    return tournament.ends_at is not None and now >= tournament.ends_at


def _resolve_current(tournament: Tournament, *, actor: Actor, now: datetime) -> bool:
    turn = campaign_open_turn(tournament.campaign)
    if turn is None:
        return False
    # What the turn had left, so that an undo can give it back (clock_undo).
    if tournament.paused:
        remaining = tournament.paused_remaining or 0.0
    elif tournament.deadline is not None:
        remaining = max(0.0, (tournament.deadline - now).total_seconds())
    else:
        remaining = 0.0
    resolved = turn_resolve(turn_id=turn.pk, now=now, by=actor.label)
    if resolved is None:
        return False
    result = resolved.result or {}
    log_write(
        tournament,
        actor=actor,
        action="turn_resolved",
        now=now,
        turn=resolved.number,
        remaining=round(remaining),
        draws=result.get("draws", []),
        meetings=result.get("meetings", []),
        scores=result.get("scores", {}),
        # R11: the seed is revealed once the draws are made, beside the commitment it meets.
        commitment=resolved.commitment,
        draw_seed=resolved.draw_seed,
    )
    tournament.campaign.refresh_from_db(fields=["version", "board"])
    # Battle tables follow the turn (R7, R8): meetings open, parted ones disperse, newcomers
    # join battles. Imported here: ``battles`` depends on this module.
    from battles.services import battles_stop, battles_sync

    battles_sync(tournament=tournament, turn_number=resolved.number, result=result, now=now)
    if _game_over(tournament, resolved.number, now):
        _enter_phase(tournament, Phase.FINISHED, now, None)
        log_write(tournament, actor=actor, action="game_ended", now=now, turn=resolved.number)
        battles_stop(tournament=tournament, actor=actor, now=now)  # R8
    else:
        # The next turn opens at once (R4) with its full length, whether this one was
        # resolved at its deadline, early by a judge, or late after downtime.
        tournament.deadline = now + timedelta(seconds=tournament.turn_seconds)
        tournament.save(update_fields=["deadline"])
        schedule_deadline(tournament)
        turn_open(
            campaign=tournament.campaign,
            number=resolved.number + 1,
            now=now,
            deadline=tournament.deadline,
        )
    announce(tournament, "turn_resolved", turn=resolved.number, phase=tournament.phase)
    return True


@transaction.atomic
def turn_redraw(*, tournament_id: int, actor: Actor, now: datetime, reason: str = "") -> Tournament:
    """A judge's deliberate re-draw (R11): the open turn gets a new secret seed.

    Undo keeps a turn's seed, so this is the only way its draws change for the same orders;
    it is logged with the commitment withdrawn and the one now published, for all to see.
    """
    tournament = tournament_lock(tournament_id)
    turn = campaign_open_turn(tournament.campaign) if tournament.phase == Phase.RUNNING else None
    if turn is None:
        raise refusal(_("turn: no turn is open, so there are no draws to renew"), "phase", 409)
    withdrawn = turn.commitment
    turn_seed_renew(turn=turn)
    log_write(
        tournament,
        actor=actor,
        action="draw_renewed",
        now=now,
        turn=turn.number,
        reason=reason,
        withdrawn=withdrawn,
        commitment=turn.commitment,
    )
    announce(tournament, "draw_renewed", turn=turn.number)
    return tournament


def _running(tournament: Tournament) -> None:
    if tournament.phase == Phase.FINISHED:
        raise refusal(_("the game has ended"), "phase", 409)
    if tournament.phase == Phase.SETUP:
        raise refusal(_("the tournament has not started"), "phase", 409)


@transaction.atomic
def clock_pause(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """Stop the clock; the time left is kept (R4)."""
    tournament = tournament_lock(tournament_id)
    _running(tournament)
    if tournament.paused:
        raise refusal(_("the clock is already paused"), "paused", 409)
    if tournament.deadline is None:
        raise refusal(_("no clock is running in this phase"), "phase", 409)
    remaining = max(0.0, (tournament.deadline - now).total_seconds())
    tournament.paused_remaining = remaining
    tournament.deadline = None
    tournament.save(update_fields=["paused_remaining", "deadline"])
    log_write(tournament, actor=actor, action="clock_paused", now=now, remaining=remaining)
    announce(tournament, "clock")
    return tournament


@transaction.atomic
def clock_resume(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    tournament = tournament_lock(tournament_id)
    _running(tournament)
    if not tournament.paused:
        raise refusal(_("the clock is not paused"), "not_paused", 409)
    remaining = tournament.paused_remaining or 0.0
    _set_deadline(tournament, now + timedelta(seconds=remaining))
    tournament.paused_remaining = None
    tournament.save(update_fields=["paused_remaining", "deadline"])
    schedule_deadline(tournament)
    log_write(tournament, actor=actor, action="clock_resumed", now=now, remaining=remaining)
    announce(tournament, "clock")
    return tournament


def _set_deadline(tournament: Tournament, deadline: datetime) -> None:
    tournament.deadline = deadline
    if tournament.phase == Phase.RUNNING:
        turn = campaign_open_turn(tournament.campaign)
        if turn is not None:
            Turn.objects.filter(pk=turn.pk).update(deadline=deadline)


@transaction.atomic
def clock_extend(*, tournament_id: int, seconds: int, actor: Actor, now: datetime) -> Tournament:
    """Give the current phase or turn more time (or less, with a negative number)."""
    tournament = tournament_lock(tournament_id)
    _running(tournament)
    if not -MAX_TURN_SECONDS <= seconds <= MAX_TURN_SECONDS or seconds == 0:
        raise refusal(
            _("seconds: a non-zero number of seconds up to %(max)s") % {"max": MAX_TURN_SECONDS}
        )
    if tournament.paused:
        tournament.paused_remaining = max(0.0, (tournament.paused_remaining or 0.0) + seconds)
    elif tournament.deadline is not None:
        _set_deadline(tournament, max(now, tournament.deadline + timedelta(seconds=seconds)))
    else:
        raise refusal(_("no clock is running in this phase"), "phase", 409)
    tournament.save(update_fields=["paused_remaining", "deadline"])
    schedule_deadline(tournament)
    log_write(tournament, actor=actor, action="clock_extended", now=now, seconds=seconds)
    announce(tournament, "clock")
    return tournament


@transaction.atomic
def clock_resolve_now(
    *, tournament_id: int, actor: Actor, now: datetime, turn: int | None = None
) -> Tournament:
    """Resolve the current turn at once, whatever the clock says (paused or not).

    ``turn`` is the turn the judge saw: if the clock (or a double click) got there first,
    that turn is no longer open and nothing more is resolved.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.RUNNING:
        raise refusal(_("there is no turn to resolve"), "phase", 409)
    if turn is not None:
        open_turn = campaign_open_turn(tournament.campaign)
        if open_turn is None or open_turn.number != turn:
            raise refusal(
                _("turn %(turn)s is no longer open: it has been resolved") % {"turn": turn},
                "stale",
                409,
            )
    was_paused = tournament.paused
    if not _resolve_current(tournament, actor=actor, now=now):
        raise refusal(_("the turn is being resolved already"), "busy", 409)
    if was_paused and tournament.phase == Phase.RUNNING:
        # The new turn starts paused too, with its full length to come.
        tournament.paused_remaining = float(tournament.turn_seconds)
        tournament.deadline = None
        tournament.save(update_fields=["paused_remaining", "deadline"])
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.OPEN).update(
            deadline=None
        )
    return tournament


@transaction.atomic
def clock_end(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """End the game now: the open turn is not played (its orders stay on record)."""
    tournament = tournament_lock(tournament_id)
    _running(tournament)
    open_turn = campaign_open_turn(tournament.campaign)
    if open_turn is not None:
        Turn.objects.filter(pk=open_turn.pk).update(status=Turn.Status.UNDONE)
    _enter_phase(tournament, Phase.FINISHED, now, None)
    log_write(
        tournament,
        actor=actor,
        action="game_ended",
        now=now,
        turn=open_turn.number if open_turn else None,
    )
    from battles.services import battles_stop  # battles depends on this module

    battles_stop(tournament=tournament, actor=actor, now=now)  # R8
    announce(tournament, "phase", phase=tournament.phase)
    return tournament


# --- Undo (R4) -------------------------------------------------------------------------------

UNDO_MIN_SECONDS = 60
UNDO_MAX_SECONDS = 4 * 3600
UNDO_LEAST_DEFAULT = 120  # a turn reopened with seconds left could not be played out
CORRECTION_ACTIONS = ("army_corrected", "control_corrected")
BATTLE_ACTION_WORDS = {
    "battle_opened": gettext_lazy("table opened"),
    "battle_seats_changed": gettext_lazy("seats changed"),
    "battle_dispersed": gettext_lazy("meeting dispersed"),
    "battle_reinforced": gettext_lazy("reinforcement seated"),
    "battle_reinforcement_refused": gettext_lazy("reinforcement refused"),
    "battle_vote": gettext_lazy("vote"),
    "battle_peace": gettext_lazy("peace"),
    "battle_started": gettext_lazy("battle started"),
    "battle_action": gettext_lazy("move played"),
    "battle_decided": gettext_lazy("battle decided"),
    "battle_ended": gettext_lazy("battle ended"),
    "battle_corrected": gettext_lazy("result corrected"),
    "battle_stopped": gettext_lazy("table stopped"),
}


@dataclass(frozen=True)
class UndoItem:
    """One thing an undo throws away, with who did it and when (for the dialog and the log)."""

    kind: str  # "order", "paper_order", "correction", "battle"
    action: str
    who: str
    at: datetime
    text: str
    army: str = ""
    province: str = ""

    def as_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "who": self.who,
            "at": self.at.isoformat(),
            "text": self.text,
            "army": self.army,
            "province": self.province,
        }


@dataclass(frozen=True)
class UndoPreview:
    """What undoing the last resolved turn would do: which turn reopens, for how long, and
    what is discarded with it."""

    turn: int
    default_seconds: int
    full_seconds: int
    items: tuple[UndoItem, ...]


def _who(label: str) -> str:
    return str(_("the clock")) if label == CLOCK.label else label


def _order_text(order: Order, name: Callable[[str], str]) -> str:
    army = order.army.code
    if order.kind == Order.Kind.MOVE:
        path = " → ".join(name(p) for p in order.path)
        return _("%(army)s: move along %(path)s") % {"army": army, "path": path}
    if order.kind == Order.Kind.REFORM:
        return _("%(army)s: reform in %(province)s") % {
            "army": army,
            "province": name(order.reform),
        }
    if order.kind == Order.Kind.WITHDRAW:
        return _("%(army)s: order withdrawn") % {"army": army}
    return _("%(army)s: hold") % {"army": army}


def _correction_text(entry: LogEntry, name: Callable[[str], str]) -> str:
    data = entry.data
    if entry.action == "army_corrected":
        after = (data.get("after") or {}).get("province")
        if after is None:
            return _("%(army)s destroyed by hand") % {"army": data.get("army", "")}
        return _("%(army)s moved by hand to %(province)s") % {
            "army": data.get("army", ""),
            "province": name(after),
        }
    return _("%(province)s: control set to %(clan)s") % {
        "province": name(data.get("province", "")),
        "clan": clan_name(data["after"]) if data.get("after") else _("nobody"),
    }


def _undo_last(tournament: Tournament) -> Turn:
    if tournament.phase not in (Phase.RUNNING, Phase.FINISHED):
        raise refusal(_("no turn has been resolved"), "phase", 409)
    last = (
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.RESOLVED)
        .order_by("-number")
        .first()
    )
    if last is None:
        raise refusal(_("no turn has been resolved"), "nothing_to_undo", 409)
    return last


def _undo_default_seconds(tournament: Tournament, last: Turn) -> int:
    """The time ``last`` had left when it was resolved (recorded with its resolution), and
    at least UNDO_LEAST_DEFAULT: a turn resolved at its deadline reopens with 2 minutes."""
    entry = (
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved", turn=last.number)
        .order_by("-at", "-pk")
        .first()
    )
    left: float = 0.0
    if entry is not None and isinstance(entry.data.get("remaining"), int | float):
        left = float(entry.data["remaining"])
    elif last.deadline is not None and last.resolved_at is not None:
        left = max(0.0, (last.deadline - last.resolved_at).total_seconds())
    return min(UNDO_MAX_SECONDS, max(UNDO_LEAST_DEFAULT, round(left)))


def _undo_items(tournament: Tournament, last: Turn) -> list[UndoItem]:
    """Orders of the turn opened after ``last``, and the corrections and battle table
    actions since ``last`` was resolved: an undo puts the board and tables back before them."""
    provinces = campaign_game_map(tournament.campaign).provinces

    def name(province: str) -> str:
        return provinces[province].name if province in provinces else province

    generals = {
        p.army_id: p for p in Player.objects.filter(tournament=tournament, army__isnull=False)
    }
    items: list[UndoItem] = []
    later_orders = (
        Order.objects.filter(
            turn__campaign=tournament.campaign,
            turn__number__gt=last.number,
            turn__status=Turn.Status.OPEN,
        )
        .select_related("army")
        .order_by("created_at", "pk")
    )
    for order in later_orders:
        who = order.author
        general = generals.get(order.army_id)
        if general is not None and who == Actor.of_player(general).label:
            who = _("%(name)s, General of %(army)s") % {
                "name": general.name,
                "army": order.army.code,
            }
        items.append(
            UndoItem(
                kind="paper_order" if order.by_judge else "order",
                action="order_withdrawn" if order.kind == Order.Kind.WITHDRAW else "order_given",
                who=who,
                at=order.created_at,
                text=_order_text(order, name),
                army=order.army.code,
            )
        )
    if last.resolved_at is not None:
        # Only the tables this resolution opened or changed go back (battles_undo); play at
        # any other table since stays as it is.
        snapshot = TableSnapshot.objects.filter(tournament=tournament, turn=last.number).first()
        tables = {str(pk) for pk in snapshot.opened} | set(snapshot.tables) if snapshot else set()
        since = LogEntry.objects.filter(tournament=tournament, at__gte=last.resolved_at).filter(
            Q(action__in=CORRECTION_ACTIONS) | Q(action__startswith="battle_")
        )
        for entry in since.order_by("at", "pk"):
            if (
                entry.action not in CORRECTION_ACTIONS
                and str(entry.data.get("battle")) not in tables
            ):
                continue
            if entry.action in CORRECTION_ACTIONS:
                kind, text = "correction", _correction_text(entry, name)
                if entry.reason:
                    text = _("%(change)s (because: %(reason)s)") % {
                        "change": text,
                        "reason": entry.reason,
                    }
            else:
                word = BATTLE_ACTION_WORDS.get(entry.action, entry.action)
                kind = "battle"
                text = _("table in %(province)s: %(what)s") % {
                    "province": name(str(entry.data.get("province", ""))),
                    "what": word,
                }
            items.append(
                UndoItem(
                    kind=kind,
                    action=entry.action,
                    who=_who(entry.actor),
                    at=entry.at,
                    text=text,
                    army=str(entry.data.get("army") or ""),
                    province=str(entry.data.get("province") or ""),
                )
            )
    items.sort(key=lambda item: item.at)
    return items


@transaction.atomic
def undo_preview(*, tournament_id: int) -> UndoPreview:
    """What ``clock_undo`` would discard now, and the time the reopened turn gets (R4)."""
    tournament = tournament_lock(tournament_id)
    last = _undo_last(tournament)
    return UndoPreview(
        turn=last.number,
        default_seconds=_undo_default_seconds(tournament, last),
        full_seconds=tournament.turn_seconds,
        items=tuple(_undo_items(tournament, last)),
    )


@transaction.atomic
def clock_undo(
    *,
    tournament_id: int,
    actor: Actor,
    now: datetime,
    reason: str = "",
    turn: int | None = None,
    seconds: int | None = None,
) -> Tournament:
    """Undo the last resolution: the board goes back, that turn reopens, the clock pauses.

    The reopened turn waits paused for the judge's Resume, with ``seconds`` on its clock or
    by default the time it had left when it was resolved (at least 2 minutes). What the undo
    discards (see ``undo_preview``) is written in the log. ``turn`` is the turn the judge saw
    as the last one played: if it is not (the same request came twice), nothing is undone.
    """
    if seconds is not None and not UNDO_MIN_SECONDS <= seconds <= UNDO_MAX_SECONDS:
        raise refusal(
            _("seconds: from %(min)s to %(max)s seconds (1 minute to 4 hours)")
            % {"min": UNDO_MIN_SECONDS, "max": UNDO_MAX_SECONDS}
        )
    tournament = tournament_lock(tournament_id)
    campaign = tournament.campaign  # locked with the tournament (see tournament_lock)
    last = _undo_last(tournament)
    if turn is not None and last.number != turn:
        raise refusal(
            _("turn %(turn)s is not the last turn played: it has been undone already")
            % {"turn": turn},
            "stale",
            409,
        )
    remaining = seconds if seconds is not None else _undo_default_seconds(tournament, last)
    discarded = _undo_items(tournament, last)
    from battles.services import battles_undo  # battles depends on this module

    if last.resolved_at is not None:
        battles_undo(tournament=tournament, turn_number=last.number, resolved_at=last.resolved_at)
    turn_undo(campaign=campaign, turn=last)
    Turn.objects.filter(pk=last.pk).update(deadline=None)
    tournament.phase = Phase.RUNNING
    tournament.deadline = None
    tournament.paused_remaining = float(remaining)
    tournament.save(update_fields=["phase", "deadline", "paused_remaining"])
    log_write(
        tournament,
        actor=actor,
        action="turn_undone",
        now=now,
        turn=last.number,
        reason=reason,
        seconds=remaining,
        discarded=[item.as_data() for item in discarded],
    )
    announce(tournament, "turn_undone", turn=last.number)
    return tournament


# --- Orders (R4) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderInput:
    kind: str
    path: tuple[str, ...] = ()
    reform: str = ""
    claim: bool = True
    on_swap: str = Order.OnSwap.ADVANCE
    turn: int | None = None  # the turn the General saw; a resolved one makes the order late


def _order_for(
    tournament: Tournament,
    army: Army,
    order: OrderInput,
    actor: Actor,
    now: datetime,
    *,
    others_hidden: bool = False,
) -> Order:
    turn = campaign_open_turn(tournament.campaign)
    if turn is not None:
        turn.campaign = tournament.campaign  # already read with the locked tournament
    if order.turn is not None and turn is not None and order.turn > turn.number:
        raise refusal(
            _("turn %(turn)s is not open yet (the open turn is %(open)s): the order was not stored")
            % {"turn": order.turn, "open": turn.number},
            "not_open",
            409,
        )
    if order.turn is not None and (turn is None or turn.number != order.turn):
        # Arrived after its turn was resolved: never carried into the next turn (R4).
        raise refusal(
            _("late: turn %(turn)s has been resolved; the order was not stored")
            % {"turn": order.turn},
            "late",
            409,
        )
    if turn is not None and now < turn.opened_at:
        # ``now`` is when the request arrived: it belonged to a turn resolved since, while it
        # waited for a thread. Never carried into the next turn (R4).
        raise refusal(_("late: the deadline has passed; the order was not stored"), "late", 409)
    if tournament.phase != Phase.RUNNING or turn is None:
        raise refusal(_("orders are given while the turns run"), "not_running", 409)
    if order.kind not in Order.Kind.values:
        raise refusal(_('kind: unknown order kind "%(kind)s"') % {"kind": order.kind})
    if order.on_swap not in Order.OnSwap.values:
        raise refusal(_('on_swap: "stay" or "advance"'))
    latest = Order.objects.filter(turn=turn, army=army).order_by("-id").first()
    if latest is not None and _order_repeats(latest, order, actor):
        # The same request again (a retry after a lost answer, a double tap): the order is
        # stored already, and storing, logging and announcing it again would change nothing.
        return latest
    try:
        stored = order_submit(
            turn=turn,
            army=army,
            kind=order.kind,
            path=order.path,
            reform=order.reform,
            claim=order.claim,
            on_swap=order.on_swap,
            author=actor.label,
            by_judge=actor.judge,
            now=now,
            others_hidden=others_hidden,
        )
    except OrderRefused as refused:
        raise refusal(
            order_refusal_text(refused.code, refused.message), refused.code, 422
        ) from refused
    log_write(
        tournament,
        actor=actor,
        action="order_withdrawn" if order.kind == Order.Kind.WITHDRAW else "order_given",
        now=now,
        turn=turn.number,
        army=army.code,
        kind=order.kind,
        path=list(order.path),
        reform=order.reform,
        claim=order.claim,
        on_swap=order.on_swap,
    )
    announce(tournament, "order", army=army.code, clan=army.clan)
    if actor.judge:
        backup_on_commit(reason="paper_order")
    return stored


@transaction.atomic
def order_give(*, player: Player, order: OrderInput, now: datetime) -> Order:
    """A General gives (or changes, or withdraws) his army's order before the deadline (R4)."""
    tournament = tournament_lock(player.tournament_id)
    if player.role != Player.Role.GENERAL or player.army is None:
        raise refusal(_("only a General gives orders"), "forbidden", 403)
    _refuse_late(tournament, now)
    sees_all = role_visibility(Role.GENERAL, _clan_roles(tournament, player.clan)).sees_all_armies
    return _order_for(
        tournament, player.army, order, Actor.of_player(player), now, others_hidden=not sees_all
    )


def _refuse_late(tournament: Tournament, now: datetime) -> None:
    """Refuse a player's order that arrived (``now``) at or after the turn's deadline (R4)."""
    if (
        tournament.phase == Phase.RUNNING
        and not tournament.paused
        and (tournament.deadline is None or now >= tournament.deadline)
    ):
        raise refusal(_("late: the deadline has passed; the order was not stored"), "late", 409)


def _clan_roles(tournament: Tournament, clan: str) -> list[Role]:
    """The roles held in ``clan``: what its members may see and do depends on them (R1.1)."""
    return [Role(r) for r in tournament.players.filter(clan=clan).values_list("role", flat=True)]


def _order_repeats(stored: Order, order: OrderInput, actor: Actor) -> bool:
    """Whether ``order`` by ``actor`` is ``stored`` again, as ``order_submit`` would store it."""
    return (
        stored.kind == order.kind
        and list(stored.path) == (list(order.path) if order.kind == Order.Kind.MOVE else [])
        and stored.reform == (order.reform if order.kind == Order.Kind.REFORM else "")
        and stored.claim == order.claim
        and stored.on_swap == order.on_swap
        and stored.author == actor.label
        and stored.by_judge == actor.judge
    )


@transaction.atomic
def order_enter(
    *, tournament_id: int, army_code: str, order: OrderInput, actor: Actor, now: datetime
) -> Order:
    """A judge enters a paper order handed in on time, while the turn is still open (R4)."""
    tournament = tournament_lock(tournament_id)
    army = Army.objects.filter(campaign=tournament.campaign, code=army_code).first()
    if army is None:
        raise refusal(_('there is no army "%(army)s"') % {"army": army_code}, "not_found", 404)
    return _order_for(tournament, army, order, actor, now)


@transaction.atomic
def order_swap_choice(*, player: Player, army_code: str, on_swap: str, now: datetime) -> Order:
    """R5.3: where a clan has a Daimyo, he decides where a swap battle is fought.

    The army's current move order is given again with the Daimyo's ``on_swap``; where the
    clan has no Daimyo, the General sets it with his own order.
    """
    tournament = tournament_lock(player.tournament_id)
    if player.role != Player.Role.DAIMYO:
        raise refusal(_("the Daimyo decides where a swap battle is fought"), "forbidden", 403)
    # Part of the order: it counts only when it arrived before the deadline, as an order.
    _refuse_late(tournament, now)
    if on_swap not in Order.OnSwap.values:
        raise refusal(_('on_swap: "stay" or "advance"'))
    army = Army.objects.filter(campaign=tournament.campaign, code=army_code).first()
    if army is None or army.clan != player.clan:
        raise refusal(
            _('there is no army "%(army)s" in your clan') % {"army": army_code}, "not_found", 404
        )
    turn = campaign_open_turn(tournament.campaign)
    current = turn_current_orders(turn).get(army.pk) if turn is not None else None
    if current is None or current.kind != Order.Kind.MOVE:
        raise refusal(
            _("%(army)s has no move order this turn") % {"army": army_code}, "no_move", 409
        )
    order = OrderInput(
        kind=current.kind,
        path=tuple(current.path),
        claim=current.claim,
        on_swap=on_swap,
    )
    return _order_for(tournament, army, order, Actor.of_player(player), now)


# --- Corrections ---------------------------------------------------------------------------


def _board_correct(
    *,
    tournament_id: int,
    action: str,
    reason: str,
    actor: Actor,
    now: datetime,
    change: Callable[[Campaign, Turn | None], dict[str, Any]],
) -> None:
    """A judge's change of the board, with a reason: locked, saved, logged, announced.

    ``change`` edits the campaign's board and returns what the log records of it; a
    ``ValueError`` from it (a province that does not exist, is impassable …) is refused.
    """
    tournament = tournament_lock(tournament_id)
    _running(tournament)
    campaign = tournament.campaign  # locked with the tournament (see tournament_lock)
    turn = campaign_open_turn(campaign)
    try:
        details = change(campaign, turn)
    except TournamentError:
        raise
    except ValueError as error:
        raise refusal(_("province: %(problem)s") % {"problem": error}) from error
    campaign.save(update_fields=["board"])
    log_write(
        tournament,
        actor=actor,
        action=action,
        now=now,
        turn=turn.number if turn else None,
        reason=reason,
        **details,
    )
    announce(tournament, "correction")


@transaction.atomic
def army_correct(
    *,
    tournament_id: int,
    army_code: str,
    province: str | None,
    destroyed_by: str = "loss",
    reason: str,
    actor: Actor,
    now: datetime,
) -> None:
    """A judge moves an army by hand, or destroys it (``province`` None), with a reason."""
    if not reason.strip():
        raise refusal(_("reason: say why the army is moved"))
    if destroyed_by not in ("loss", "winner"):
        raise refusal(_('destroyed_by: "loss" or "winner"'))

    def move(campaign: Campaign, turn: Turn | None) -> dict[str, Any]:
        army = Army.objects.filter(campaign=campaign, code=army_code).first()
        if army is None:
            raise refusal(_('there is no army "%(army)s"') % {"army": army_code}, "not_found", 404)
        before = campaign.board.get("armies", {}).get(army_code)
        if before and before.get("in_battle"):
            # Its table would go on playing with an army the board no longer has there,
            # and the table's result would then undo the correction (R8).
            raise refusal(
                _(
                    "%(army)s is fighting at the battle table in %(province)s: record or "
                    "correct that battle's result first (R8)"
                )
                % {"army": army_code, "province": before.get("province")},
                "in_battle",
                409,
            )
        board_place(
            campaign=campaign,
            army=army,
            province=province,
            destroyed_in_turn=turn.number if turn else None,
            destroyed_by=destroyed_by,
        )
        return {"army": army_code, "before": before, "after": campaign.board["armies"][army_code]}

    _board_correct(
        tournament_id=tournament_id,
        action="army_corrected",
        reason=reason,
        actor=actor,
        now=now,
        change=move,
    )


@transaction.atomic
def control_correct(
    *,
    tournament_id: int,
    province: str,
    clan: str | None,
    reason: str,
    actor: Actor,
    now: datetime,
) -> None:
    """A judge sets who controls a province, with a reason."""
    if not reason.strip():
        raise refusal(_("reason: say why control changes"))
    if clan is not None and not is_clan(clan):
        raise refusal(_('clan: unknown clan "%(clan)s"') % {"clan": clan})

    def set_control(campaign: Campaign, turn: Turn | None) -> dict[str, Any]:
        before = campaign.board.get("control", {}).get(province)
        board_set_control(campaign=campaign, province=province, clan=clan)
        return {"province": province, "before": before, "after": clan}

    _board_correct(
        tournament_id=tournament_id,
        action="control_corrected",
        reason=reason,
        actor=actor,
        now=now,
        change=set_control,
    )


# --- Announcements ---------------------------------------------------------------------------

MAX_ANNOUNCEMENT = 500


@transaction.atomic
def announcement_post(
    *, tournament_id: int, text: str, actor: Actor, now: datetime
) -> Announcement:
    """A judge's message for everyone (the big screen, every page); logged and announced."""
    text = text.strip()
    if not text:
        raise refusal(_("text: write the announcement"), "invalid", 422)
    if len(text) > MAX_ANNOUNCEMENT:
        raise refusal(
            _("text: at most %(count)s characters") % {"count": MAX_ANNOUNCEMENT}, "invalid", 422
        )
    tournament = tournament_lock(tournament_id)
    announcement = Announcement.objects.create(
        tournament=tournament, text=text, created_at=now, author=actor.label
    )
    turn = campaign_open_turn(tournament.campaign)
    log_write(
        tournament,
        actor=actor,
        action="announcement",
        now=now,
        turn=turn.number if turn else None,
        announcement=announcement.pk,
        text=text,
    )
    announce(tournament, "announcement", announcement=announcement.pk)
    return announcement


# --- Written instructions (R1.1) --------------------------------------------------------------

MAX_INSTRUCTION = Instruction.MAX_TEXT


@transaction.atomic
def instruction_send(
    *, player: Player, text: str, recipient_id: int | None, now: datetime
) -> Instruction:
    """A Daimyo's written instruction to one of his clan's Generals, or to all of them (R1.1).

    Only where the clan has no Karo: with a Karo, the Daimyo's messages go by word of mouth
    through the Karo and nothing is written. Logged with its text (judges see everything)
    and announced; the event, as every event, carries no text (``tournament_state`` gives
    it to those who may read it).
    """
    if player.role != Player.Role.DAIMYO:
        raise refusal(_("only a Daimyo sends written instructions"), "forbidden", 403)
    tournament = tournament_lock(player.tournament_id)
    _running(tournament)
    roles = _clan_roles(tournament, player.clan)
    if not role_visibility(Role.DAIMYO, roles).gives_written_instructions:
        raise refusal(
            _(
                "your clan has a Karo: the Daimyo sends no written instructions, only spoken "
                "messages that the Karo carries to the Generals (R1.1)"
            ),
            "karo",
            403,
        )
    recipient = None
    if recipient_id is not None:
        recipient = tournament.players.filter(pk=recipient_id).first()
        if recipient is None:
            raise refusal(
                _("to: there is no player %(id)s in this tournament") % {"id": recipient_id},
                "not_found",
                404,
            )
        if recipient.clan != player.clan or recipient.role != Player.Role.GENERAL:
            raise refusal(
                _("to: write to one of your clan's Generals, or to all of them"),
                "not_a_general",
                422,
            )
    text = text.strip()
    if not text:
        raise refusal(_("text: write the instruction"))
    if len(text) > MAX_INSTRUCTION:
        raise refusal(_("text: at most %(count)s characters") % {"count": MAX_INSTRUCTION})
    turn = campaign_open_turn(tournament.campaign)
    instruction = Instruction.objects.create(
        tournament=tournament,
        clan=player.clan,
        author=player,
        recipient=recipient,
        text=text,
        created_at=now,
        turn=turn.number if turn else None,
    )
    log_write(
        tournament,
        actor=Actor.of_player(player),
        action="instruction_sent",
        now=now,
        turn=instruction.turn,
        instruction=instruction.pk,
        clan=player.clan,
        to=recipient.pk if recipient else None,
        text=text,
    )
    announce(tournament, "instruction")
    return instruction
