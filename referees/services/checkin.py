"""Check-in before the start (issue 32): who has opened his join link, who a judge marked
present, and what to do about a player who did not come.

A player is checked in the first time his join link logs a device in, or when a judge marks
him present by hand (he plays on paper). Before the start a no-show is replaced in two taps
(another name on his seat, a new join link), or, where R1 (b) allows, the line-up shrinks
without him: his clan drops its Karo first, then its Daimyo (``sl5r.rules.roles.lineup_shrink``
decides; here the players, their armies and the count follow).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from referees.kernel.core import Actor, announce, log_write, refusal, tournament_lock, unit_of_work
from referees.kernel.lineups import lineup_problems_text, lineup_shape_for, tournament_shape
from referees.models import Player, Tournament
from referees.services.players import player_army_drop, player_seat_hand_over
from sl5r.rules.roles import LineupShrink, Role, lineup_shrink
from strategic_map.clans import clan_name

Phase = Tournament.Phase

# Before the turns run, check-in is what the console shows of the players (issue 32).
CHECK_IN_PHASES = frozenset({Phase.SETUP, Phase.PLANNING, Phase.DEPLOYMENT})


def checkin_row(player: Player) -> dict[str, Any]:
    """A player's check-in, as the console and the join sheet show it."""
    return {
        "id": player.pk,
        "name": player.name,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
        "checked_in_at": player.checked_in_at.isoformat() if player.checked_in_at else None,
        # Empty: he opened his join link himself; else the judge who marked him present.
        "marked_by": player.checked_in_by.removeprefix("judge ") or None,
    }


def tournament_checkin(*, tournament: Tournament) -> list[dict[str, Any]]:
    """Every player's check-in, those not checked in first (what the judge acts on)."""
    players = tournament.players.select_related("army").order_by("clan", "role", "id")
    rows = [checkin_row(p) for p in players]
    return sorted(rows, key=lambda r: r["checked_in_at"] is not None)


@unit_of_work()
def player_check_in(*, player: Player, now: datetime) -> bool:
    """The player's join link opened on a device: checked in, the first time only."""
    tournament = tournament_lock(player.tournament_id)
    updated = Player.objects.filter(pk=player.pk, checked_in_at__isnull=True).update(
        checked_in_at=now, checked_in_by=""
    )
    if not updated:
        return False
    log_write(
        tournament,
        actor=Actor.of_player(player),
        action="player_checked_in",
        now=now,
        player=player.pk,
    )
    announce(tournament, "checkin")
    return True


def _player_of(tournament: Tournament, player_id: int) -> Player:
    player = tournament.players.select_related("army").filter(pk=player_id).first()
    if player is None:
        raise refusal(
            _("there is no player %(id)s in this tournament") % {"id": player_id}, "not_found"
        )
    return player


@unit_of_work()
def player_presence_set(
    *, tournament_id: int, player_id: int, present: bool, actor: Actor, now: datetime
) -> Player:
    """A judge marks a player present by hand (he plays on paper), or takes a mistaken
    mark back. A player who checked in with his own link stays checked in."""
    tournament = tournament_lock(tournament_id)
    player = _player_of(tournament, player_id)
    if present == (player.checked_in_at is not None):
        return player
    if not present and not player.checked_in_by:
        raise refusal(
            _("%(name)s opened his join link himself: he is checked in") % {"name": player.name},
            "status",
        )
    player.checked_in_at = now if present else None
    player.checked_in_by = actor.label if present else ""
    player.save(update_fields=["checked_in_at", "checked_in_by"])
    log_write(
        tournament,
        actor=actor,
        action="player_marked_present" if present else "player_presence_cleared",
        now=now,
        player=player.pk,
        name=player.name,
    )
    announce(tournament, "checkin")
    return player


@unit_of_work()
def player_stand_in(
    *, tournament_id: int, player_id: int, name: str, actor: Actor, now: datetime
) -> Player:
    """Before the start, someone else takes a no-show's seat: the seat (clan, role, army)
    stays, the name changes, a new join link is made (the old card stops working) and the
    newcomer is not checked in until he opens it. After the start, ``player_replace``."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(_("the tournament has started: replace the player instead"), "phase")
    player = _player_of(tournament, player_id)
    return player_seat_hand_over(
        tournament=tournament,
        player=player,
        name=name,
        action="player_stood_in",
        check_in_cleared=True,
        actor=actor,
        now=now,
    )


# --- A smaller line-up (R1 b) ------------------------------------------------------------------


@dataclass(frozen=True)
class ShrinkPreview:
    """What the line-up becomes without ``leaving``: shown before it is applied."""

    players_before: int
    players_after: int
    plan: LineupShrink
    people: dict[int, Player]
    problem: str

    def as_dict(self) -> dict[str, Any]:
        def person(pk: int) -> dict[str, Any]:
            p = self.people[pk]
            army = p.army.code if p.army else None
            return {"id": pk, "name": p.name, "clan": p.clan, "role": p.role, "army": army}

        heirs = {int(heir): int(gone) for gone, heir in self.plan.armies.items()}
        changes = []
        clans: dict[str, list[dict[str, Any]]] = {}
        for clan, seats in self.plan.clans.items():
            clans[clan] = []
            for seat in seats:
                pk = int(seat.member)
                gone = heirs.get(pk)
                army = self.people[gone].army if gone is not None else self.people[pk].army
                row = {
                    **person(pk),
                    "role": seat.after.value,
                    "role_before": seat.before.value,
                    "army": army.code if army else None,
                }
                clans[clan].append(row)
                if seat.changed:
                    changes.append(row)
        return {
            "players_before": self.players_before,
            "players_after": self.players_after,
            "leaving": [person(int(m)) for m in self.plan.leaving],
            "changes": changes,
            "clans": clans,
            "problem": self.problem,
            "ok": not self.problem,
        }


def _shrink_plan(tournament: Tournament, player_ids: Sequence[int]) -> ShrinkPreview:
    if tournament.phase != Phase.SETUP:
        raise refusal(
            _("the line-up shrinks during set-up only: replace the player instead"), "phase"
        )
    wanted = list(dict.fromkeys(player_ids))
    if not wanted:
        raise refusal(_("players: choose who did not come"), "validation")
    people = {p.pk: p for p in tournament.players.select_related("army").order_by("id")}
    unknown = [pk for pk in wanted if pk not in people]
    if unknown:
        raise refusal(
            _("there is no player %(id)s in this tournament") % {"id": unknown[0]}, "not_found"
        )
    count = tournament.player_count - len(wanted)
    now_shape = tournament_shape(tournament)
    shape = lineup_shape_for(
        player_count=count,
        shortfall=tournament.shortfall,
        three_variant=tournament.three_variant,
    )
    if shape.clans != now_shape.clans:
        raise refusal(
            _(
                "with %(count)s players R1 (a) would leave the Shadowlands out: set the "
                "tournament to give some clans one member fewer (R1 b), or replace the players"
            )
            % {"count": count},
            "lineup",
        )
    members: dict[str, list[tuple[str, Role]]] = {}
    for player in people.values():
        members.setdefault(player.clan, []).append((str(player.pk), Role(player.role)))
    # Each clan's members in R1's order, so that the Generals keep their seats first.
    order = {Role.GENERAL: 0, Role.DAIMYO: 1, Role.KARO: 2}
    for pairs in members.values():
        pairs.sort(key=lambda pair: (order[pair[1]], int(pair[0])))
    plan = lineup_shrink(shape, members, [str(pk) for pk in wanted])
    problem = lineup_problems_text(plan.problems, shape) if plan.problems else ""
    return ShrinkPreview(tournament.player_count, count, plan, people, problem)


def lineup_shrink_preview(*, tournament: Tournament, player_ids: Sequence[int]) -> ShrinkPreview:
    """The line-up without these players, for the judge to read before he applies it."""
    return _shrink_plan(tournament, player_ids)


@unit_of_work()
def lineup_shrink_apply(
    *, tournament_id: int, player_ids: Sequence[int], actor: Actor, now: datetime
) -> ShrinkPreview:
    """The line-up without these players, applied: the count goes down, a Karo or Daimyo
    who steps into a missing General's army takes it, the others leave with their armies.

    Refused, with every reason, when R1 (b) does not allow the result.
    """
    tournament = tournament_lock(tournament_id)
    preview = _shrink_plan(tournament, player_ids)
    if preview.problem:
        raise refusal(_("line-up: %(problems)s") % {"problems": preview.problem}, "lineup")
    plan, people = preview.plan, preview.people
    summary = preview.as_dict()
    for gone_id, heir_id in plan.armies.items():
        gone, heir = people[int(gone_id)], people[int(heir_id)]
        army = gone.army
        gone.army = None
        gone.save(update_fields=["army"])
        heir.army = army
        heir.save(update_fields=["army"])
    for seats in plan.clans.values():
        for seat in seats:
            if seat.changed:
                player = people[int(seat.member)]
                player.role = seat.after.value
                player.save(update_fields=["role"])
    renumbered: dict[str, str] = {}
    for member in plan.leaving:
        player = people[int(member)]
        renumbered.update(player_army_drop(tournament=tournament, player=player))
        player.delete()
    tournament.player_count = preview.players_after
    tournament.save(update_fields=["player_count"])
    log_write(
        tournament,
        actor=actor,
        action="lineup_shrunk",
        now=now,
        players_before=preview.players_before,
        players_after=preview.players_after,
        leaving=summary["leaving"],
        changes=summary["changes"],
        renumbered=renumbered,
    )
    announce(tournament, "players")
    return preview


def shrink_change_text(row: dict[str, Any]) -> str:
    """ "Anna (Crab): Karo → General, army crab-2", for the console and the log."""
    return _("%(name)s (%(clan)s): %(before)s → %(after)s") % {
        "name": row["name"],
        "clan": clan_name(row["clan"]),
        "before": Player.Role(row["role_before"]).label,
        "after": Player.Role(row["role"]).label,
    } + (f", {row['army']}" if row.get("army") else "")
