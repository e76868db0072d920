"""Battle tables in the admin, to look at (the services alone change them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from battles.models import Battle, BattleProposal, BattleSeat

# The admin's classes are generic in django-stubs only; Django's cannot be subscripted.
if TYPE_CHECKING:
    _SeatInline = admin.TabularInline[BattleSeat, Battle]
    _ProposalInline = admin.TabularInline[BattleProposal, Battle]
    _BattleModelAdmin = admin.ModelAdmin[Battle]
else:
    _SeatInline = _ProposalInline = admin.TabularInline
    _BattleModelAdmin = admin.ModelAdmin


class BattleSeatInline(_SeatInline):
    model = BattleSeat
    extra = 0
    readonly_fields = ("army", "vote", "voted_at", "joined_turn", "reinforcement")
    can_delete = False


class BattleProposalInline(_ProposalInline):
    model = BattleProposal
    extra = 0
    readonly_fields = ("by", "to", "action", "status", "made_at", "answered_at", "answered_by")
    can_delete = False


@admin.register(Battle)
class BattleAdmin(_BattleModelAdmin):
    list_display = ("id", "tournament", "province", "status", "game", "opened_turn")
    list_filter = ("status", "game")
    readonly_fields = (
        "tournament",
        "province",
        "opened_turn",
        "status",
        "game",
        "state",
        "setup",
        "outcome",
        "casualties",
        "opened_at",
        "started_at",
        "decided_at",
        "ended_at",
        "updated_at",
    )
    inlines = [BattleSeatInline, BattleProposalInline]
