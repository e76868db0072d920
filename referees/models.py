"""Tournaments, their players and judges, the clock, and the record of everything done."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from strategic_map.models import Army, Campaign


class Tournament(models.Model):
    """One Strategic L5R event (R1, R3, R4): its settings, its phase and its clock.

    The clock has one deadline for whatever is running (clan planning, negotiation, or the
    current turn). While paused, ``deadline`` is empty and ``paused_remaining`` keeps the
    seconds that were left.
    """

    class Phase(models.TextChoices):
        SETUP = "setup", _("setting up")
        PLANNING = "planning", _("clan planning")
        DEPLOYMENT = "deployment", _("declaring starting positions")
        NEGOTIATION = "negotiation", _("negotiation")
        RUNNING = "running", _("turns")
        FINISHED = "finished", _("finished")

    class Shortfall(models.TextChoices):
        SMALLER_CLANS = "smaller_clans", _("some clans one member fewer")
        EXCLUDE_SHADOWLANDS = "exclude_shadowlands", _("leave the Shadowlands out")

    class ThreeVariant(models.TextChoices):
        GENERALS_AND_DAIMYO = "generals_and_daimyo", _("2 Generals and a Daimyo")
        THREE_GENERALS = "three_generals", _("3 Generals")

    class BattleGame(models.TextChoices):
        L5R = "l5r", _("Legend of the Five Rings card game")
        BUSHIDO = "bushido", _("Bushido (two-army battles)")

    name = models.CharField(_("name"), max_length=200)
    campaign = models.OneToOneField(Campaign, on_delete=models.PROTECT, related_name="tournament")
    judges = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="judged_tournaments", verbose_name=_("judges")
    )
    player_count = models.PositiveSmallIntegerField(_("players"))
    shortfall = models.CharField(
        _("player count not a multiple of 8"),
        max_length=24,
        choices=Shortfall.choices,
        default=Shortfall.SMALLER_CLANS,
    )
    three_variant = models.CharField(
        _("three per clan"),
        max_length=24,
        choices=ThreeVariant.choices,
        default=ThreeVariant.GENERALS_AND_DAIMYO,
    )
    turn_seconds = models.PositiveIntegerField(_("turn length (seconds)"), default=15 * 60)
    turns_total = models.PositiveIntegerField(_("number of turns"), null=True, blank=True)
    ends_at = models.DateTimeField(_("end time"), null=True, blank=True)
    planning_seconds = models.PositiveIntegerField(_("clan planning (seconds)"), default=5 * 60)
    negotiation_seconds = models.PositiveIntegerField(_("negotiation (seconds)"), default=15 * 60)
    time_zone = models.CharField(_("time zone"), max_length=64, default="UTC")
    battle_game = models.CharField(
        _("battle game"), max_length=8, choices=BattleGame.choices, default=BattleGame.L5R
    )
    bushido_turns = models.PositiveSmallIntegerField(_("Bushido turns per battle"), default=4)
    # The big screen sounds a gong at each deadline; a judge switches it off for a quiet hall.
    screen_gong = models.BooleanField(_("gong on the big screen"), default=True)

    phase = models.CharField(_("phase"), max_length=12, choices=Phase.choices, default=Phase.SETUP)
    deadline = models.DateTimeField(_("deadline"), null=True, blank=True)
    paused_remaining = models.FloatField(_("seconds left when paused"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("tournament")
        verbose_name_plural = _("tournaments")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["phase", "deadline"], name="tournament_due")]

    def __str__(self) -> str:
        return self.name

    @property
    def paused(self) -> bool:
        return self.paused_remaining is not None


class Player(models.Model):
    """A player: his clan and role (R1); a General has his army.

    The join link carries a token signed with the site's secret over the player's id and
    ``token_nonce``; reissuing changes the nonce, revoking empties it, so old links stop
    working without the database ever holding a usable token.
    """

    class Role(models.TextChoices):
        GENERAL = "general", _("General")
        DAIMYO = "daimyo", _("Daimyo")
        KARO = "karo", _("Karo")

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="players")
    name = models.CharField(_("name"), max_length=120)
    clan = models.CharField(_("clan"), max_length=16)
    role = models.CharField(_("role"), max_length=8, choices=Role.choices)
    army = models.OneToOneField(
        Army, on_delete=models.SET_NULL, null=True, blank=True, related_name="general"
    )
    token_nonce = models.CharField(_("join token nonce"), max_length=64, blank=True, default="")
    token_issued_at = models.DateTimeField(_("join link issued at"), null=True, blank=True)
    # Check-in: when the player first opened his join link on a device, or when a judge
    # marked him present by hand (he plays on paper); ``checked_in_by`` names that judge.
    checked_in_at = models.DateTimeField(_("checked in at"), null=True, blank=True)
    checked_in_by = models.CharField(_("marked present by"), max_length=200, blank=True, default="")
    created_at = models.DateTimeField(_("registered at"), auto_now_add=True)

    class Meta:
        verbose_name = _("player")
        verbose_name_plural = _("players")
        ordering = ["tournament", "clan", "role", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.clan} {self.role})"


class JudgeKey(models.Model):
    """An API key for a judge's scripts; only its SHA-256 is kept."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judge_keys"
    )
    label = models.CharField(_("label"), max_length=120, blank=True, default="")
    key_hash = models.CharField(_("key hash"), max_length=64, unique=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        verbose_name = _("judge API key")
        verbose_name_plural = _("judge API keys")

    def __str__(self) -> str:
        return f"{self.user} {self.label}"


class LogEntry(models.Model):
    """The append-only record (R11): every order, draw, resolution and judge action."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="log")
    at = models.DateTimeField(_("at"))
    actor = models.CharField(_("by"), max_length=200)
    action = models.CharField(_("action"), max_length=40)
    turn = models.PositiveIntegerField(_("turn"), null=True, blank=True)
    reason = models.TextField(_("reason"), blank=True, default="")
    data = models.JSONField(_("details"), default=dict, blank=True)

    class Meta:
        verbose_name = _("log entry")
        verbose_name_plural = _("log entries")
        ordering = ["tournament", "id"]
        indexes = [
            models.Index(fields=["tournament", "id"], name="log_tournament"),
            # Entries of one kind, read on every judge's state (the missed-deadline flags)
            # and by an undo, among a day's thousands of order lines.
            models.Index(fields=["tournament", "action"], name="log_tournament_action"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%H:%M:%S} {self.actor} {self.action}"


class Announcement(models.Model):
    """A judge's message to everyone: the big screen and every page show the latest ones."""

    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="announcements"
    )
    text = models.TextField(_("text"))
    created_at = models.DateTimeField(_("posted at"))
    author = models.CharField(_("posted by"), max_length=200)

    class Meta:
        verbose_name = _("announcement")
        verbose_name_plural = _("announcements")
        ordering = ["tournament", "-created_at", "-id"]
        indexes = [
            models.Index(fields=["tournament", "-created_at", "-id"], name="announcement_latest")
        ]

    def __str__(self) -> str:
        return self.text[:60]


class Instruction(models.Model):
    """A Daimyo's written instruction to his Generals (R1.1).

    Only where his clan has no Karo (with a Karo, messages go by word of mouth). Addressed
    to one General of the clan, or to all of them (``recipient`` empty).
    """

    MAX_TEXT = 2000

    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="instructions"
    )
    clan = models.CharField(_("clan"), max_length=16)
    author = models.ForeignKey(
        Player,
        on_delete=models.CASCADE,
        related_name="instructions_sent",
        verbose_name=_("Daimyo"),
    )
    recipient = models.ForeignKey(
        Player,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="instructions_received",
        verbose_name=_("to"),
        help_text=_("empty: all the Generals of the clan"),
    )
    text = models.TextField(_("text"), max_length=MAX_TEXT)
    created_at = models.DateTimeField(_("sent at"))
    turn = models.PositiveIntegerField(_("turn"), null=True, blank=True)

    class Meta:
        verbose_name = _("instruction")
        verbose_name_plural = _("instructions")
        ordering = ["tournament", "-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["tournament", "clan", "-created_at", "-id"], name="instruction_latest"
            )
        ]

    def __str__(self) -> str:
        return self.text[:60]


class JudgeCall(models.Model):
    """A player's call for a judge, from his page or his battle table.

    One open call per player: a repeated tap finds the call already open. A judge takes it
    ("on my way", his name shown to the caller) and closes it with a note; the caller may
    also withdraw it. Every step is in the log. R1.1: only the caller and the judges read it.
    """

    class Reason(models.TextChoices):
        RULES = "rules", _("a rules question")
        DISPUTE = "dispute", _("a dispute")
        LATE = "late", _("a late arrival")
        DEVICE = "device", _("a problem with the phone or the site")
        OTHER = "other", _("something else")

    MAX_TEXT = 200

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="calls")
    player = models.ForeignKey(
        Player, on_delete=models.CASCADE, related_name="calls", verbose_name=_("called by")
    )
    # Where the caller was when he called: his battle table's province, else his army's.
    province = models.CharField(_("province"), max_length=64, blank=True, default="")
    battle = models.PositiveIntegerField(_("battle table"), null=True, blank=True)
    reason = models.CharField(
        _("reason"), max_length=12, choices=Reason.choices, default=Reason.OTHER
    )
    text = models.CharField(_("details"), max_length=MAX_TEXT, blank=True, default="")
    created_at = models.DateTimeField(_("called at"))
    taken_by = models.CharField(_("taken by"), max_length=200, blank=True, default="")
    taken_at = models.DateTimeField(_("taken at"), null=True, blank=True)
    closed_by = models.CharField(_("closed by"), max_length=200, blank=True, default="")
    closed_at = models.DateTimeField(_("closed at"), null=True, blank=True)
    note = models.CharField(_("note"), max_length=MAX_TEXT, blank=True, default="")

    class Meta:
        verbose_name = _("judge call")
        verbose_name_plural = _("judge calls")
        ordering = ["tournament", "created_at", "id"]
        constraints = [
            # A repeated tap (or two phones of one player) is one call.
            models.UniqueConstraint(
                fields=["tournament", "player"],
                condition=models.Q(closed_at__isnull=True),
                name="judge_call_one_open_per_player",
            )
        ]
        indexes = [models.Index(fields=["tournament", "closed_at"], name="judge_call_open")]

    def __str__(self) -> str:
        return f"{self.player} {self.reason} {self.created_at:%H:%M}"
