"""The tournaments the homes list: a judge's own, and those the public may follow.

One row per tournament, read in one query whatever the number of tournaments: its phase,
its current turn (as ``tournament_state`` counts it: the open turn, else the last resolved
one, else 0) and how many players have registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypedDict

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from referees.kernel.access import user_is_active
from referees.models import LogEntry, Player, Tournament
from referees.texts.words import turn_words
from strategic_map.models import Turn

if TYPE_CHECKING:
    # Typing only: django-stubs-ext is a development requirement, not a runtime one.
    from django_stubs_ext import WithAnnotations

# The public home keeps a finished tournament listed this long after its last log entry.
RECENTLY_FINISHED = timedelta(days=7)


@dataclass(frozen=True)
class TournamentRow:
    id: int
    name: str
    phase: str
    phase_label: str
    turn: int
    turns_total: int | None
    ends_at: datetime | None
    registered: int
    player_count: int
    last_activity: datetime | None
    daimyos: int = 0
    """Players registered as Daimyo: where there is one, the armies are not public (R1.1)."""

    @property
    def played_public(self) -> bool:
        """Whether the public may read the played turns: where no clan has a Daimyo (R1.1),
        and everywhere once the game is over (R12); the judges always."""
        return self.phase == Tournament.Phase.FINISHED or self.daimyos == 0

    @property
    def under_way(self) -> bool:
        return self.phase not in (Tournament.Phase.SETUP, Tournament.Phase.FINISHED)

    @property
    def turn_words(self) -> str:
        """ "Ended after turn 5 of 8" once over; else empty (the card shows "3 / 8")."""
        if self.phase != Tournament.Phase.FINISHED:
            return ""
        return turn_words(turn=self.turn, turns_total=self.turns_total, ended_after_turn=self.turn)


class _Counted(TypedDict):
    current_turn: int
    registered: int
    last_activity: datetime | None
    daimyos: int


def _annotated(
    tournaments: QuerySet[Tournament],
) -> QuerySet[WithAnnotations[Tournament, _Counted]]:
    current_turn = (
        Turn.objects.filter(
            campaign=OuterRef("campaign"),
            status__in=(Turn.Status.OPEN, Turn.Status.RESOLVED),
        )
        .order_by("-number")
        .values("number")[:1]
    )
    last_log = LogEntry.objects.filter(tournament=OuterRef("pk")).order_by("-id").values("at")[:1]
    # "End the game" leaves its open turn unplayed (undone): a finished tournament's turn is
    # the last one played, as every page says ("ended after turn 5").
    return tournaments.annotate(
        current_turn=Coalesce(Subquery(current_turn, output_field=IntegerField()), 0),
        registered=Count("players", distinct=True),
        daimyos=Count("players", filter=Q(players__role=Player.Role.DAIMYO), distinct=True),
        last_activity=Subquery(last_log),
    ).order_by("-created_at", "-id")


def _rows(annotated: QuerySet[WithAnnotations[Tournament, _Counted]]) -> list[TournamentRow]:
    return [
        TournamentRow(
            id=t.pk,
            name=t.name,
            phase=t.phase,
            phase_label=str(Tournament.Phase(t.phase).label),
            turn=t.current_turn,
            turns_total=t.turns_total,
            ends_at=t.ends_at,
            registered=t.registered,
            player_count=t.player_count,
            last_activity=t.last_activity,
            daimyos=t.daimyos,
        )
        for t in annotated
    ]


def judged_tournaments(*, user: AbstractBaseUser | AnonymousUser) -> list[TournamentRow]:
    """The tournaments ``user`` judges, newest first; a superuser judges them all."""
    # An anonymous user is never active; the isinstance tells the type checker so.
    if isinstance(user, AnonymousUser) or not user_is_active(user):
        return []
    tournaments = Tournament.objects.all()
    if not getattr(user, "is_superuser", False):
        tournaments = tournaments.filter(judges__pk=user.pk)
    return _rows(_annotated(tournaments))


def tournaments_under_way() -> list[TournamentRow]:
    """Tournaments past their set-up and not finished (clan planning to the turns)."""
    return _rows(
        _annotated(
            Tournament.objects.exclude(
                phase__in=(Tournament.Phase.SETUP, Tournament.Phase.FINISHED)
            )
        )
    )


def tournaments_finished_recently(*, now: datetime) -> list[TournamentRow]:
    """Finished tournaments whose last log entry is at most ``RECENTLY_FINISHED`` old."""
    finished = _annotated(Tournament.objects.filter(phase=Tournament.Phase.FINISHED))
    return _rows(finished.filter(last_activity__gte=now - RECENTLY_FINISHED))
