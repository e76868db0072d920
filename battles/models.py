"""Battle tables (R7, R8): from a meeting of armies to a result that changes the map.

A ``Battle`` is one table in one province. It opens as a meeting when the turn brings armies
of several clans together, and goes on to peace, a battle, a decision and an end; or it
disperses when the armies part. ``state`` is the table game's own state
(``sl5r.rules.games``), stored as the engine returns it; the services alone write it.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from sl5r.rules.draws import seed_new


class Battle(models.Model):
    class Status(models.TextChoices):
        MEETING = "meeting", _("meeting: the Generals say peace or battle")
        PEACE = "peace", _("peace: the armies stay together")
        BATTLE = "battle", _("battle: being played")
        DECIDED = "decided", _("decided: the winner chooses the survivors")
        ENDED = "ended", _("ended")
        DISPERSED = "dispersed", _("dispersed: the armies parted")
        STOPPED = "stopped", _("stopped: the game ended while it went on")

    class Game(models.TextChoices):
        L5R = "l5r", _("Legend of the Five Rings card game")
        BUSHIDO = "bushido", _("Bushido")

    tournament = models.ForeignKey(
        "referees.Tournament", on_delete=models.CASCADE, related_name="battles"
    )
    province = models.CharField(_("province"), max_length=64)
    opened_turn = models.PositiveIntegerField(_("opened in turn"))
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.MEETING
    )
    game = models.CharField(_("game"), max_length=8, choices=Game.choices, default=Game.L5R)
    state = models.JSONField(_("table state"), null=True, blank=True)
    setup = models.JSONField(_("set-up"), null=True, blank=True)
    outcome = models.JSONField(_("outcome"), null=True, blank=True)
    casualties = models.JSONField(_("casualties"), null=True, blank=True)
    opened_at = models.DateTimeField(_("opened at"))
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"))
    # R11: fixed when the table opens, secret (only its commitment shown) until it is over.
    draw_seed = models.CharField(_("draw seed"), max_length=64, default=seed_new, editable=False)

    class Meta:
        verbose_name = _("battle")
        verbose_name_plural = _("battles")
        ordering = ["tournament", "-opened_at", "-id"]
        indexes = [models.Index(fields=["tournament", "status"], name="battle_tournament_status")]
        constraints = [
            # One open table per province: a newcomer joins it rather than opening another.
            models.UniqueConstraint(
                fields=["tournament", "province"],
                condition=models.Q(status__in=["meeting", "peace", "battle", "decided"]),
                name="battle_one_open_table_per_province",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.province} ({self.status})"


OPEN_STATUSES = (
    Battle.Status.MEETING,
    Battle.Status.PEACE,
    Battle.Status.BATTLE,
    Battle.Status.DECIDED,
)
GATHERING_STATUSES = (Battle.Status.MEETING, Battle.Status.PEACE)
FIGHTING_STATUSES = (Battle.Status.BATTLE, Battle.Status.DECIDED)


class BattleSeat(models.Model):
    """One army at a table: its General's word at the meeting, and when it sat down."""

    class Vote(models.TextChoices):
        NONE = "", _("not yet")
        PEACE = "peace", _("peace")
        BATTLE = "battle", _("battle")

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="seats")
    army = models.ForeignKey(
        "strategic_map.Army", on_delete=models.CASCADE, related_name="battle_seats"
    )
    vote = models.CharField(
        _("vote"), max_length=6, choices=Vote.choices, blank=True, default=Vote.NONE
    )
    voted_at = models.DateTimeField(_("voted at"), null=True, blank=True)
    joined_turn = models.PositiveIntegerField(_("joined in turn"))
    reinforcement = models.BooleanField(_("reinforcement"), default=False)

    class Meta:
        verbose_name = _("battle seat")
        verbose_name_plural = _("battle seats")
        ordering = ["battle", "id"]
        constraints = [
            models.UniqueConstraint(fields=["battle", "army"], name="battle_seat_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.army} at {self.battle}"


class TableSnapshot(models.Model):
    """The tables one turn's resolution changed, as they were just before it (for undo).

    ``tables`` maps a battle id to its status, table state, end time and seats before the
    turn's meetings, dispersals and reinforcements were applied; ``opened`` lists the
    tables the resolution opened. Undoing the turn puts them back (``battles_undo``).
    """

    tournament = models.ForeignKey(
        "referees.Tournament", on_delete=models.CASCADE, related_name="table_snapshots"
    )
    turn = models.PositiveIntegerField(_("turn"))
    taken_at = models.DateTimeField(_("taken at"))
    tables = models.JSONField(_("tables before the turn"), default=dict)
    opened = models.JSONField(_("tables the turn opened"), default=list)

    class Meta:
        verbose_name = _("tables before a turn")
        verbose_name_plural = _("tables before turns")
        constraints = [
            models.UniqueConstraint(fields=["tournament", "turn"], name="table_snapshot_turn"),
        ]

    def __str__(self) -> str:
        return f"tables before turn {self.turn}"


class BattleProposal(models.Model):
    """A General's change to another player's counts, waiting for that player's consent.

    R8, R13: a player keeps his own honor, provinces and rings; a change to another's (and
    so an end of the game for him) takes effect only when he confirms it on his phone or a
    judge does. ``action`` is the table action as it will be applied, ``by`` its proposer.
    """

    class Status(models.TextChoices):
        OPEN = "open", _("waiting for consent")
        CONFIRMED = "confirmed", _("confirmed")
        DECLINED = "declined", _("declined")
        WITHDRAWN = "withdrawn", _("withdrawn")
        LAPSED = "lapsed", _("lapsed: the battle was decided first")

    battle = models.ForeignKey(Battle, on_delete=models.CASCADE, related_name="proposals")
    by = models.CharField(_("proposed by (army)"), max_length=64)
    to = models.CharField(_("for (army)"), max_length=64)
    action = models.JSONField(_("action"))
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.OPEN
    )
    made_at = models.DateTimeField(_("made at"))
    answered_at = models.DateTimeField(_("answered at"), null=True, blank=True)
    answered_by = models.CharField(_("answered by"), max_length=150, blank=True, default="")

    class Meta:
        verbose_name = _("battle proposal")
        verbose_name_plural = _("battle proposals")
        ordering = ["battle", "id"]
        indexes = [models.Index(fields=["battle", "status"], name="battle_proposal_status")]

    def __str__(self) -> str:
        return f"{self.by} → {self.to}: {self.action.get('type')} ({self.status})"
