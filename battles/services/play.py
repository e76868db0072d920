"""At the table (R7, R8, R13, R14): the meeting's vote (peace or battle), the battle's start, and
one action of the game; a change to another player's counts becomes a proposal for his
consent (``battles.services.consent``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from battles.board import (
    battle_setup,
    board_battle_enter,
    campaign_control,
    campaign_turn_number,
    province_armies,
)
from battles.draws import BattleDraws
from battles.models import FIGHTING_STATUSES, GATHERING_STATUSES, Battle, BattleProposal, BattleSeat
from battles.services._table import (
    Who,
    as_stored,
    battle_locked,
    battle_save,
    check_playing,
    participant_rows,
    played,
    played_store,
    seats_of,
    table_entrants,
    table_game,
    table_log,
    who_of,
)
from referees.kernel.core import Actor, announce, refusal, unit_of_work
from referees.models import Player, Tournament
from sl5r.rules.games import GameError, TableOutcome

Status = Battle.Status
VOTES = ("peace", "battle")

ERROR_NOT_SEATED = gettext_noop("your army is not at this table")
# R8, R13: the counts a player keeps for himself; another's are changed only with his consent.
COUNTED_ACTIONS = frozenset({"honor", "province", "ring", "models", "victory_points"})
DISHONOR = -20  # R13: at or below at the end of his own turn, a player loses


# --- The meeting: peace or battle (R7) -------------------------------------------------------


@unit_of_work()
def meeting_vote(
    *, battle_id: int, army_code: str | None, vote: str, actor: Actor | Player, now: datetime
) -> Battle:
    """A General says peace or battle for his own army (a judge may record it for him).

    All peace: the table is at ``peace``. Any battle: the battle starts at once, from a
    meeting or from peace (R7: a General in a peaceful meeting may call for battle later).
    """
    tournament, battle = battle_locked(battle_id)
    who = who_of(actor, tournament)
    if vote not in VOTES:
        raise refusal(_('vote: "peace" or "battle"'), "validation")
    if who.judge:
        if not army_code:
            raise refusal(_("army: name the army whose General's word is recorded"), "validation")
    elif who.army is None:
        raise refusal(_("only a General votes at a meeting, for his own army"), "forbidden")
    elif army_code and army_code != who.army:
        raise refusal(_("a General votes for his own army only"), "forbidden")
    else:
        army_code = who.army
    check_playing(tournament)
    seats = seats_of(battle)
    seat = seats.get(army_code or "")
    if seat is None:
        if who.judge:
            raise refusal(
                _('army: "%(army)s" is not at this table') % {"army": army_code}, "validation"
            )
        raise refusal(_(ERROR_NOT_SEATED), "forbidden")
    if battle.status not in GATHERING_STATUSES:
        raise refusal(
            _("the meeting is over: this table is %(status)s (votes are for meetings)")
            % {"status": battle.status},
            "status",
        )
    if seat.vote == vote:
        # The same word again (a phone's retry, a second tap) changes nothing: the record
        # keeps the first one and nobody is told of a change (R11).
        return battle
    seat.vote = vote
    seat.voted_at = now
    seat.save(update_fields=["vote", "voted_at"])
    turn = campaign_turn_number(tournament.campaign)
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_vote",
        now=now,
        turn=turn,
        army=army_code,
        vote=vote,
    )
    if vote == "battle":
        _start(tournament, battle, who=who, called_by=army_code or "", turn=turn, now=now)
    elif all(s.vote == "peace" for s in seats.values()) and battle.status != Status.PEACE:
        battle.status = Status.PEACE
        battle_save(battle, now, "status")
        table_log(tournament, battle, actor=who.actor, action="battle_peace", now=now, turn=turn)
    announce(tournament, "battle")
    return battle


def _start(
    tournament: Tournament, battle: Battle, *, who: Who, called_by: str, turn: int, now: datetime
) -> None:
    """The battle starts with every army in the province (R7): set-up, ``in_battle``, game."""
    campaign = tournament.campaign
    present = province_armies(campaign, battle.province)
    seats = seats_of(battle)
    gone = sorted(set(seats) - set(present))
    arrived = sorted(set(present) - set(seats))
    if len({a.clan for a in present.values()}) < 2:
        raise refusal(
            _("the armies here are all of one clan now: there is nobody to fight (R7)"),
            "no_enemy",
        )
    control = campaign_control(campaign)
    setup = battle_setup(campaign, province=battle.province, armies=present, control=control)
    game = table_game(battle)
    draws = BattleDraws(battle, state=None, participants=present, move={"type": "start"})
    try:
        state = game.open(
            entrants=table_entrants(setup, present),
            options=_options(tournament, battle.game),
            rng=draws.rng,
            rng_label=draws.label,
        )
    except GameError as error:
        raise refusal(
            _("the battle cannot start: %(problem)s") % {"problem": error}, "game"
        ) from error
    # The table follows the board: an army moved by a judge since the meeting opened.
    BattleSeat.objects.filter(battle=battle, army__code__in=gone).delete()
    BattleSeat.objects.bulk_create(
        [BattleSeat(battle=battle, army=present[c], joined_turn=turn) for c in arrived]
    )
    board_battle_enter(campaign=campaign, codes=present)  # R4: their Generals give no orders
    battle.status = Status.BATTLE
    battle.started_at = now
    battle.state = as_stored(state)
    battle.setup = {
        "province": battle.province,
        "control": control,
        "participants": participant_rows(setup, present, reinforcement=False, joined_turn=turn),
        "seating_chosen_by": list(setup.seating_chosen_by),
    }
    battle_save(battle, now, "status", "started_at", "state", "setup")
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_started",
        now=now,
        turn=turn,
        called_by=called_by,
        armies=sorted(present),
        game=battle.game,
        setup=battle.setup["participants"],
        draws=draws.record(state),
    )


def _options(tournament: Tournament, game: str) -> dict[str, Any]:
    if game == Battle.Game.BUSHIDO:
        return {"turns": tournament.bushido_turns}  # R14: the scenario sets the turns
    return {}


# --- Playing the table -----------------------------------------------------------------------


@unit_of_work()
def battle_act(
    *, battle_id: int, action: Mapping[str, Any], actor: Actor | Player, now: datetime
) -> Battle:
    """One action at the table: a General acts as his own army, a judge as ``judge``.

    An action the game does not allow now is refused (422) with the game's reason. When the
    game has an outcome, a truce or a win with nobody left to spare ends the battle at once;
    otherwise the table waits for the winner's choice (``decided``), during which only a
    judge acts (to change the result, e.g. ``judge_result``).
    """
    tournament, battle = battle_locked(battle_id)
    who = who_of(actor, tournament)
    if not who.judge and who.army is None:
        raise refusal(_("only a General (or a judge) acts at a battle table"), "forbidden")
    check_playing(tournament)
    seats = seats_of(battle)
    if not who.judge and who.army not in seats:
        raise refusal(_(ERROR_NOT_SEATED), "forbidden")
    if battle.status == Status.DECIDED and not who.judge:
        # A judge may still change the game's result (the game allows it); nobody else acts.
        raise refusal(_("the game is over: the winner chooses which armies survive"), "decided")
    if battle.status not in FIGHTING_STATUSES:
        raise refusal(
            _("no battle is being played at this table (%(status)s)") % {"status": battle.status},
            "status",
        )
    kind = action.get("type") if isinstance(action, Mapping) else None
    if not isinstance(kind, str) or not kind.strip():
        raise refusal(_("type: name the action"), "validation")
    move = dict(action)
    if who.judge:
        by = move.get("by") or "judge"
        if by != "judge" and by not in seats:
            raise refusal(
                _('by: "%(by)s" is not at this table ("judge" or a seated army)') % {"by": by},
                "validation",
            )
        move["by"] = by
    else:
        move["by"] = who.army  # a General always acts as his own army
    confirmed = move.pop("confirm", False) is True
    game = table_game(battle)
    state, outcome, draws = played(game, battle, move, seats)
    turn = campaign_turn_number(tournament.campaign)
    subject = move.get("army")
    if not who.judge and kind in COUNTED_ACTIONS and _someone_elses(battle, seats, who, subject):
        # R8, R13: another player's count changes only when he (or a judge) agrees.
        _propose(tournament, battle, who=who, to=str(subject), move=move, turn=turn, now=now)
        announce(tournament, "battle")
        return battle
    if not who.judge and not confirmed and _ends_a_game(battle.state, state, outcome):
        raise refusal(
            _(
                "this ends the game at this table (R8): send it again with confirm: true if "
                "that is what happened"
            ),
            "confirm",
        )
    played_store(
        tournament,
        battle,
        state,
        outcome,
        seats=seats,
        who=who,
        move=move,
        turn=turn,
        now=now,
        draws=draws,
    )
    announce(tournament, "battle")
    return battle


def _someone_elses(battle: Battle, seats: Mapping[str, BattleSeat], who: Who, subject: Any) -> bool:
    """Whether ``subject``'s counts belong to another player than the General acting."""
    if not isinstance(subject, str) or subject not in seats or subject == who.army:
        return False
    if battle.game == Battle.Game.BUSHIDO and who.army is not None and who.army in seats:
        # R14: a side is a clan's warband; its Generals keep its models and points together.
        return seats[subject].army.clan != seats[who.army].army.clan
    return True


def _honor_of(state: Any, army: str) -> int | None:
    for player in state.get("players", []) if isinstance(state, Mapping) else []:
        if player.get("army") == army and isinstance(player.get("honor"), int):
            return int(player["honor"])
    return None


def _ends_a_game(before: Any, after: Any, outcome: TableOutcome | None) -> bool:
    """Whether an action ends the game for someone (R8, R13): a new loser, an outcome, or a
    family honor brought down to −20 (he loses at the end of his turn unless it rises). A
    truce everyone agreed to ends nobody's game."""
    if outcome is not None and outcome.kind == "win":
        return True
    if set(after.get("losers", [])) - set(before.get("losers", [])):
        return True
    for player in after.get("players", []):
        army = player.get("army")
        was, now_ = _honor_of(before, army), _honor_of(after, army)
        if was is not None and now_ is not None and now_ <= DISHONOR < was:
            return True
    return False


# --- A change to another player's counts waits for his consent (R8, R13) ---------------------


def _propose(
    tournament: Tournament,
    battle: Battle,
    *,
    who: Who,
    to: str,
    move: Mapping[str, Any],
    turn: int,
    now: datetime,
) -> BattleProposal:
    open_ = BattleProposal.objects.filter(
        battle=battle, by=who.army or "", to=to, status=BattleProposal.Status.OPEN
    )
    for existing in open_:
        if existing.action == dict(move):
            return existing  # a second tap, a phone's retry: the proposal stands once
    proposal = BattleProposal.objects.create(
        battle=battle, by=who.army or "", to=to, action=as_stored(dict(move)), made_at=now
    )
    battle_save(battle, now)
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_proposal_made",
        now=now,
        turn=turn,
        proposal=proposal.pk,
        by_army=proposal.by,
        to_army=to,
        move=proposal.action,
    )
    return proposal
