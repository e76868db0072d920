"""The start (R3): planning, the start positions, negotiation, then the first turn."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from django.utils.translation import gettext as _

from referees.kernel.core import (
    CLOCK,
    Actor,
    announce,
    log_write,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.deadlines import schedule_deadline
from referees.kernel.lineups import (
    lineup_refuse_unless_fits,
    registered_roles,
    tournament_shape,
)
from referees.models import Tournament
from referees.services.setup import lineup_refuse_unseated
from referees.texts.words import start_problem_text
from sl5r.rules.roles import (
    Role,
    starting_positions_problems,
)
from strategic_map.board import Board
from strategic_map.models import Army
from strategic_map.selectors import campaign_game_map
from strategic_map.services import (
    board_place,
    turn_open,
)

Phase = Tournament.Phase


# --- The start (R3) -----------------------------------------------------------------------


@unit_of_work()
def tournament_start(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """End set-up: the clans' planning time begins (R3.1)."""
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.SETUP:
        raise refusal(_("the tournament has already started"), "phase")
    # R1: the whole line-up the count gives, every problem named (409 ``lineup``).
    lineup_refuse_unless_fits(
        tournament_shape(tournament), registered_roles(tournament.players.all()), complete=True
    )
    generals: dict[str, int] = {}
    for player in tournament.players.filter(role=Role.GENERAL.value):
        generals[player.clan] = generals.get(player.clan, 0) + 1
    lineup_refuse_unseated(
        campaign_game_map(tournament.campaign), generals, tournament.campaign.excluded_clans
    )
    phase_enter(tournament, Phase.PLANNING, now, tournament.planning_seconds)
    log_write(tournament, actor=actor, action="planning_started", now=now)
    announce(tournament, "phase", phase=tournament.phase)
    return tournament


def phase_enter(tournament: Tournament, phase: str, now: datetime, seconds: float | None) -> None:
    tournament.phase = phase
    tournament.paused_remaining = None
    tournament.deadline = now + timedelta(seconds=seconds) if seconds is not None else None
    tournament.save(update_fields=["phase", "deadline", "paused_remaining"])
    schedule_deadline(tournament)


def _undeclared_clans(tournament: Tournament) -> list[str]:
    board = Board.of(tournament.campaign)
    clans = {
        a.clan
        for a in Army.objects.filter(campaign=tournament.campaign)
        if not board.is_placed(a.code)
    }
    return sorted(clans)


@unit_of_work()
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
            _("starting positions are declared after set-up, before negotiation"), "phase"
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
    Board.of(campaign).save()
    log_write(
        tournament,
        actor=actor,
        action="start_positions",
        now=now,
        clan=clan,
        positions=dict(positions),
    )
    if tournament.phase == Phase.DEPLOYMENT and not _undeclared_clans(tournament):
        phase_enter(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
        log_write(tournament, actor=CLOCK, action="negotiation_started", now=now)
    announce(tournament, "positions", clan=clan, phase=tournament.phase)
    return tournament


@unit_of_work()
def tournament_advance(
    *, tournament_id: int, actor: Actor, now: datetime, seen_phase: str | None = None
) -> Tournament:
    """A judge moves the start on to its next step without waiting for the timer.

    ``seen_phase`` is the phase the judge saw when he pressed "Next phase now": if the clock
    (declaring the last clan's positions starts the negotiation) or another judge moved on
    first, nothing happens, rather than skipping the phase he never saw (R3.3).
    """
    tournament = tournament_lock(tournament_id)
    if seen_phase is not None and tournament.phase != seen_phase:
        raise refusal(
            _("the tournament has moved on to %(phase)s since: nothing was skipped")
            % {"phase": Phase(tournament.phase).label},
            "stale",
        )
    phase_advance(tournament, actor, now)
    return tournament


def phase_advance(tournament: Tournament, actor: Actor, now: datetime) -> None:
    if tournament.phase == Phase.PLANNING:
        if _undeclared_clans(tournament):
            phase_enter(tournament, Phase.DEPLOYMENT, now, None)
            log_write(tournament, actor=actor, action="deployment_started", now=now)
        else:
            phase_enter(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
            log_write(tournament, actor=actor, action="negotiation_started", now=now)
    elif tournament.phase == Phase.DEPLOYMENT:
        undeclared = _undeclared_clans(tournament)
        if undeclared:
            raise refusal(
                _("these clans have not declared their starting positions: %(clans)s")
                % {"clans": ", ".join(undeclared)},
                "positions_undeclared",
            )
        phase_enter(tournament, Phase.NEGOTIATION, now, tournament.negotiation_seconds)
        log_write(tournament, actor=actor, action="negotiation_started", now=now)
    elif tournament.phase == Phase.NEGOTIATION:
        phase_enter(tournament, Phase.RUNNING, now, tournament.turn_seconds)
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
            _("nothing to advance in phase %(phase)s") % {"phase": tournament.phase}, "phase"
        )
    announce(tournament, "phase", phase=tournament.phase)
