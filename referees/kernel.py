"""The tournament kernel: the lock, the log, announcements, refusals and who acted.

Every tournament operation (set-up, the clock, orders, battles) takes the tournament's lock,
writes its lines in the log (R11) and announces itself after commit through these. They sit
below every domain module (``referees.services``, ``referees.roster``, ``referees.judging``,
``battles``), so that each uses them by their public names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext as _

from referees.backups import backup_on_commit
from referees.events import event_send_on_commit
from referees.models import LogEntry, Player, Tournament
from strategic_map.models import Campaign


class TournamentError(ValueError):
    """A request that cannot be carried out; the message says why, for a person."""

    def __init__(self, message: str, *, code: str = "invalid", status: int = 400) -> None:
        message = str(message)  # a lazy translation is read now, in the asker's language
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def refusal(message: str, code: str = "invalid", status: int = 400) -> TournamentError:
    return TournamentError(message, code=code, status=status)


@dataclass(frozen=True)
class Actor:
    """Who did something, as the log shows it."""

    label: str
    judge: bool = False

    @classmethod
    def of_user(cls, user: AbstractBaseUser) -> Actor:
        return cls(label=f"judge {user.get_username()}", judge=True)

    @classmethod
    def of_player(cls, player: Player) -> Actor:
        return cls(label=f"{player.role} {player.name} ({player.clan})")


CLOCK = Actor(label="clock")


def log_write(
    tournament: Tournament,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    **data: Any,
) -> LogEntry:
    return LogEntry.objects.create(
        tournament=tournament,
        at=now,
        actor=actor.label,
        action=action,
        turn=turn,
        reason=reason,
        data=data,
    )


# The changes a venue backs up once committed (referees/backups.py): the start, the board,
# the clock, the tables and the judges' announcements. Not a General's order or a Daimyo's
# instruction, which come up to 48 a second; a judge's paper order is backed up in
# ``_order_for``.
BACKUP_KINDS = frozenset(
    {
        "phase",
        "positions",
        "turn_resolved",
        "turn_undone",
        "correction",
        "clock",
        "battle",
        "announcement",
    }
)


def announce(tournament: Tournament, kind: str, **data: Any) -> None:
    campaign = tournament.campaign
    Campaign.objects.filter(pk=campaign.pk).update(version=campaign.version + 1)
    campaign.version += 1
    event_send_on_commit(tournament_id=tournament.pk, version=campaign.version, kind=kind, **data)
    if kind in BACKUP_KINDS:
        backup_on_commit(reason=kind)


def tournament_lock(tournament_id: int) -> Tournament:
    """The tournament row and its campaign's, locked until the transaction ends.

    ``SELECT … FOR UPDATE`` over the join locks both rows, so a tournament's operations run
    one at a time and read a campaign nobody else is changing.
    """
    try:
        return (
            Tournament.objects.select_for_update()
            .select_related("campaign")
            # The map's own copy is read only where a process has not built its graph yet
            # (campaign_game_map); decoding it on every locked operation was wasted.
            .defer("campaign__map_data")
            .get(pk=tournament_id)
        )
    except Tournament.DoesNotExist:
        raise refusal(
            _("there is no tournament %(id)s") % {"id": tournament_id}, "not_found", 404
        ) from None
