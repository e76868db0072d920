"""The judges' announcements and the Daimyo's written instructions (R1.1)."""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _

from referees.kernel.core import (
    Actor,
    announce,
    log_write,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.visibility import clan_held_roles
from referees.models import Announcement, Instruction, Player, Tournament
from referees.services.clock import refuse_unless_in_play
from sl5r.rules.roles import (
    Role,
    role_visibility,
)
from strategic_map.selectors import campaign_open_turn

Phase = Tournament.Phase


# --- Announcements ---------------------------------------------------------------------------

MAX_ANNOUNCEMENT = 500


@unit_of_work()
def announcement_post(
    *, tournament_id: int, text: str, actor: Actor, now: datetime
) -> Announcement:
    """A judge's message for everyone (the big screen, every page); logged and announced."""
    text = text.strip()
    if not text:
        raise refusal(_("text: write the announcement"), "validation")
    if len(text) > MAX_ANNOUNCEMENT:
        raise refusal(
            _("text: at most %(count)s characters") % {"count": MAX_ANNOUNCEMENT}, "validation"
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


@unit_of_work()
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
        raise refusal(_("only a Daimyo sends written instructions"), "forbidden")
    tournament = tournament_lock(player.tournament_id)
    refuse_unless_in_play(tournament)
    roles = clan_held_roles(tournament, player.clan)
    if not role_visibility(Role.DAIMYO, roles).gives_written_instructions:
        raise refusal(
            _(
                "your clan has a Karo: the Daimyo sends no written instructions, only spoken "
                "messages that the Karo carries to the Generals (R1.1)"
            ),
            "karo",
        )
    recipient = None
    if recipient_id is not None:
        recipient = tournament.players.filter(pk=recipient_id).first()
        if recipient is None:
            raise refusal(
                _("to: there is no player %(id)s in this tournament") % {"id": recipient_id},
                "not_found",
            )
        if recipient.clan != player.clan or recipient.role != Player.Role.GENERAL:
            raise refusal(
                _("to: write to one of your clan's Generals, or to all of them"),
                "not_a_general",
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
    announce(tournament, "instruction", clans=[player.clan])
    return instruction
