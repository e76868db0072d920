from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from sl5r.rules.draws import seed_commitment


class Map(models.Model):
    """A map a tournament can be played on.

    ``data`` holds the map JSON exactly as accepted by ``sl5r.rules.mapgraph.map_from_dict``
    (provinces, borders, drawing hints); rows are written only by
    ``strategic_map.services.map_import``, which validates it first.
    """

    slug = models.SlugField(_("slug"), max_length=64, unique=True)
    name = models.CharField(_("name"), max_length=200)
    data = models.JSONField(_("map data"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("map")
        verbose_name_plural = _("maps")
        ordering = ["name", "slug"]

    def __str__(self) -> str:
        return self.name


class Campaign(models.Model):
    """The state of one game on the strategic map: armies, control and turns.

    ``map_data`` is a copy of the map taken when the campaign is created, so that editing or
    re-importing a map never changes a game being played on it. ``board`` is the whole
    position in one value, ``{"armies": {code: {...}}, "control": {province: clan}}``: a turn
    reads and writes it in one query whatever the number of armies, and an undo restores it
    whole. ``version`` grows with every change a viewer could see; live updates carry it so
    that clients notice a missed one. ``frame_version`` grows with every change except the
    orders, instructions and announcements of a turn: while it stays, what an order is
    checked against (the players and their roles, the open turn, the board) is the same, so
    that a process may keep it between orders (``referees.services.order_frame``).
    """

    map = models.ForeignKey(Map, on_delete=models.PROTECT, related_name="campaigns")
    map_data = models.JSONField(_("map data"))
    clan_abilities = models.BooleanField(_("clan abilities"), default=True)
    excluded_clans = models.JSONField(_("excluded clans"), default=list, blank=True)
    base_hand = models.PositiveSmallIntegerField(_("base starting hand"), default=5)
    board = models.JSONField(_("board"), default=dict)
    version = models.PositiveBigIntegerField(_("version"), default=0)
    frame_version = models.PositiveBigIntegerField(_("frame version"), default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("campaign")
        verbose_name_plural = _("campaigns")

    def __str__(self) -> str:
        return f"{self.map} #{self.pk}"


class Army(models.Model):
    """One General's army (R1: every General commands exactly one).

    Where it stands is part of the campaign's ``board``; this row is its identity, which
    orders and players refer to.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="armies")
    code = models.CharField(_("code"), max_length=64)
    clan = models.CharField(_("clan"), max_length=16)

    class Meta:
        verbose_name = _("army")
        verbose_name_plural = _("armies")
        ordering = ["campaign", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "code"], name="army_code_unique"),
        ]

    def __str__(self) -> str:
        return self.code


class Turn(models.Model):
    """One strategic turn of a campaign (R4).

    A turn is resolved exactly once: the resolver moves it from OPEN to RESOLVING with a
    conditional update, so a second caller finds nothing to do. ``case`` is the turn as the
    engine saw it, in the case-file format with the draws that were made, so that an undo can
    restore the board and an export replays the same result; ``result`` is the engine's
    output document (docs/adjudication.md).
    An undone turn keeps its rows, orders included, for the record.
    """

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        RESOLVING = "resolving", _("resolving")
        RESOLVED = "resolved", _("resolved")
        UNDONE = "undone", _("undone")

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField(_("number"))
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.OPEN
    )
    opened_at = models.DateTimeField(_("opened at"))
    deadline = models.DateTimeField(_("deadline"), null=True, blank=True)
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)
    resolved_by = models.CharField(_("resolved by"), max_length=64, blank=True, default="")
    case = models.JSONField(_("case file"), null=True, blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)
    # R11: the secret seed of the turn's draws (64 hex digits), fixed when the turn opens.
    # Only its commitment is shown until the turn is resolved; undo and re-resolution keep it.
    draw_seed = models.CharField(_("draw seed"), max_length=64, blank=True, default="")

    class Meta:
        verbose_name = _("turn")
        verbose_name_plural = _("turns")
        ordering = ["campaign", "number", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "number"],
                condition=~models.Q(status="undone"),
                name="turn_number_unique_unless_undone",
            ),
        ]
        indexes = [models.Index(fields=["campaign", "status"], name="turn_campaign_status")]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.number} ({self.status})"

    @property
    def commitment(self) -> str:
        """SHA-256 of the draw seed, published while the seed is secret (R11)."""
        return seed_commitment(self.draw_seed) if self.draw_seed else ""


class Order(models.Model):
    """One order as it was given (R4). Rows are never changed: a new order for the same army
    and turn replaces the previous one, and a withdrawal is a row too. The latest row counts.
    """

    class Kind(models.TextChoices):
        MOVE = "move", _("move")
        HOLD = "hold", _("hold")
        REFORM = "reform", _("reform")
        WITHDRAW = "withdraw", _("withdrawn")

    class OnSwap(models.TextChoices):
        ADVANCE = "advance", _("advance")
        STAY = "stay", _("stay")

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="orders")
    army = models.ForeignKey(Army, on_delete=models.CASCADE, related_name="orders")
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices)
    path = models.JSONField(_("path"), default=list, blank=True)
    reform = models.CharField(_("reform in"), max_length=64, blank=True, default="")
    claim = models.BooleanField(_("claims control"), default=True)
    on_swap = models.CharField(
        _("on swap"), max_length=8, choices=OnSwap.choices, default=OnSwap.ADVANCE
    )
    created_at = models.DateTimeField(_("given at"))
    author = models.CharField(_("given by"), max_length=200)
    by_judge = models.BooleanField(_("entered by a judge"), default=False)

    class Meta:
        verbose_name = _("order")
        verbose_name_plural = _("orders")
        ordering = ["turn", "army", "id"]
        indexes = [models.Index(fields=["turn", "army", "id"], name="order_turn_army")]

    def __str__(self) -> str:
        return f"{self.army} {self.kind} {self.path or self.reform}"
