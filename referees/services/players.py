"""One registered player changed by a judge: renamed, moved, removed or replaced.

Before the start a player may be moved to another clan or role (R1 checked on the line-up
that results) or removed; his army follows his role, and a clan's army codes stay
``clan-1`` … ``clan-n``, the numbering ``player_register`` gives. Once the tournament runs,
a player who leaves is replaced: the newcomer keeps the army, clan and role, and gets a
join link of his own. A stand-in before the start (``referees.services.checkin``) takes a
seat the same way (``player_seat_hand_over``).
"""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _

from referees.kernel.core import Actor, announce, log_write, refusal, tournament_lock, unit_of_work
from referees.kernel.lineups import lineup_refuse_unless_fits, registered_roles, tournament_shape
from referees.models import Player, Tournament
from referees.services.setup import player_name_checked, player_token_reissue, tournament_clans
from sl5r.rules.clans import is_clan
from sl5r.rules.roles import Role
from strategic_map.clans import clan_name
from strategic_map.models import Army, Campaign
from strategic_map.services import army_create

Phase = Tournament.Phase


def _player_of(tournament: Tournament, player_id: int) -> Player:
    player = (
        Player.objects.select_related("army").filter(pk=player_id, tournament=tournament).first()
    )
    if player is None:
        raise refusal(
            _("there is no player %(id)s in this tournament") % {"id": player_id},
            "not_found",
        )
    return player


def _clean_name(tournament: Tournament, name: str, *, player: Player) -> str:
    return player_name_checked(tournament=tournament, name=name, player=player)


def _army_number(code: str) -> int:
    number = code.rpartition("-")[2]
    return int(number) if number.isdigit() else 10_000


def _armies_renumber(campaign: Campaign, clan: str) -> dict[str, str]:
    """The clan's armies numbered ``clan-1`` … ``clan-n`` again, in their order; old → new.

    Renamed in ascending order, each army takes a number no other holds by then.
    """
    changed: dict[str, str] = {}
    armies = sorted(
        Army.objects.filter(campaign=campaign, clan=clan), key=lambda a: _army_number(a.code)
    )
    for number, army in enumerate(armies, start=1):
        code = f"{clan}-{number}"
        if army.code != code:
            changed[army.code] = code
            army.code = code
            army.save(update_fields=["code"])
    return changed


def player_army_drop(*, tournament: Tournament, player: Player) -> dict[str, str]:
    """Delete the player's army (set-up only: it is on no board, under no order)."""
    army = player.army
    if army is None:
        return {}
    player.army = None
    player.save(update_fields=["army"])
    army.delete()
    return _armies_renumber(tournament.campaign, player.clan)


@unit_of_work()
def player_rename(
    *, tournament_id: int, player_id: int, name: str, actor: Actor, now: datetime
) -> Player:
    """A player's name corrected, in any phase (the log keeps the old one)."""
    tournament = tournament_lock(tournament_id)
    player = _player_of(tournament, player_id)
    new_name = _clean_name(tournament, name, player=player)
    if new_name == player.name:
        return player
    old_name, player.name = player.name, new_name
    # The newcomer has not opened his new link yet (issue 32: check-in).
    player.checked_in_at, player.checked_in_by = None, ""
    player.save(update_fields=["name", "checked_in_at", "checked_in_by"])
    log_write(
        tournament,
        actor=actor,
        action="player_renamed",
        now=now,
        player=player.pk,
        old_name=old_name,
        name=new_name,
    )
    announce(tournament, "players", player=player.pk)
    return player


@unit_of_work()
def player_move(
    *,
    tournament_id: int,
    player_id: int,
    clan: str,
    role: str,
    actor: Actor,
    now: datetime,
) -> Player:
    """Before the start, a player to another clan and/or role, if R1 allows the result.

    His army follows: a General moved to another clan gets an army there instead, one who
    stops being a General loses his, one who becomes one gets one; the clans' army codes
    stay ``clan-1`` … ``clan-n``.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(
            _("players change clan or role during set-up only: replace a player instead"),
            "phase",
        )
    player = _player_of(tournament, player_id)
    if not is_clan(clan):
        raise refusal(_('clan: unknown clan "%(clan)s"') % {"clan": clan})
    if clan not in tournament_clans(tournament):
        raise refusal(
            _("clan: the %(clan)s are not in this tournament (R1 a)") % {"clan": clan_name(clan)}
        )
    try:
        new_role = Role(role)
    except ValueError:
        raise refusal(
            _('role: unknown role "%(role)s" (general, daimyo or karo)') % {"role": role}
        ) from None
    if clan == player.clan and new_role.value == player.role:
        return player
    roles = registered_roles(tournament.players.exclude(pk=player.pk))
    roles.setdefault(clan, []).append(new_role)
    lineup_refuse_unless_fits(tournament_shape(tournament), roles)
    old_clan, old_role = player.clan, player.role
    old_army = player.army.code if player.army else None
    renumbered: dict[str, str] = {}
    if player.army is not None and (new_role is not Role.GENERAL or clan != old_clan):
        renumbered = player_army_drop(tournament=tournament, player=player)
    if new_role is Role.GENERAL and player.army is None:
        number = Army.objects.filter(campaign=tournament.campaign, clan=clan).count() + 1
        player.army = army_create(campaign=tournament.campaign, code=f"{clan}-{number}", clan=clan)
    player.clan, player.role = clan, new_role.value
    player.save(update_fields=["clan", "role", "army"])
    log_write(
        tournament,
        actor=actor,
        action="player_moved",
        now=now,
        player=player.pk,
        name=player.name,
        old_clan=old_clan,
        old_role=old_role,
        clan=clan,
        role=new_role.value,
        old_army=old_army,
        army=player.army.code if player.army else None,
        renumbered=renumbered,
    )
    announce(tournament, "players", player=player.pk)
    return player


@unit_of_work()
def player_remove(*, tournament_id: int, player_id: int, actor: Actor, now: datetime) -> None:
    """Before the start, a player taken off the list with his army; his join link dies."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(
            _("players are removed during set-up only: replace a player instead"), "phase"
        )
    player = _player_of(tournament, player_id)
    army = player.army.code if player.army else None
    renumbered = player_army_drop(tournament=tournament, player=player)
    log_write(
        tournament,
        actor=actor,
        action="player_removed",
        now=now,
        player=player.pk,
        name=player.name,
        clan=player.clan,
        role=player.role,
        army=army,
        renumbered=renumbered,
    )
    player.delete()
    announce(tournament, "players", player=player_id)


@unit_of_work()
def player_replace(
    *, tournament_id: int, player_id: int, name: str, actor: Actor, now: datetime
) -> Player:
    """Another person takes over a player who leaves the running tournament: the army, clan
    and role stay; the newcomer gets a new join link and the old one stops working."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase == Phase.SETUP:
        raise refusal(
            _("before the start, rename the player or remove him instead of replacing him"),
            "phase",
        )
    if tournament.phase == Phase.FINISHED:
        raise refusal(_("the game is over: nobody is replaced"), "phase")
    player = _player_of(tournament, player_id)
    return player_seat_hand_over(
        tournament=tournament,
        player=player,
        name=name,
        action="player_replaced",
        check_in_cleared=False,
        actor=actor,
        now=now,
    )


def player_seat_hand_over(
    *,
    tournament: Tournament,
    player: Player,
    name: str,
    action: str,
    check_in_cleared: bool,
    actor: Actor,
    now: datetime,
) -> Player:
    """Another person takes ``player``'s seat (clan, role and army stay): the name changes,
    a new join link is made and the old one stops working, logged as ``action``.

    A stand-in before the start (``referees.services.checkin.player_stand_in``) clears the
    check-in too: the newcomer has not opened his link yet. After the start
    (``player_replace``) check-in is over, and the mark stays as it was.
    """
    new_name = _clean_name(tournament, name, player=player)
    old_name, player.name = player.name, new_name
    fields = ["name"]
    if check_in_cleared:
        player.checked_in_at, player.checked_in_by = None, ""
        fields += ["checked_in_at", "checked_in_by"]
    player.save(update_fields=fields)
    log_write(
        tournament,
        actor=actor,
        action=action,
        now=now,
        player=player.pk,
        old_name=old_name,
        name=new_name,
        clan=player.clan,
        role=player.role,
        army=player.army.code if player.army else None,
    )
    player.tournament = tournament
    player_token_reissue(player=player, actor=actor, now=now)
    announce(tournament, "players", player=player.pk)
    return player
