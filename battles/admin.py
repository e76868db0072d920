"""Battle tables in the admin, to look at (the services alone change them)."""

from __future__ import annotations

from django.contrib import admin

from battles.models import Battle, BattleProposal, BattleSeat


class BattleSeatInline(admin.TabularInline):
    model = BattleSeat
    extra = 0
    readonly_fields = ("army", "vote", "voted_at", "joined_turn", "reinforcement")
    can_delete = False


class BattleProposalInline(admin.TabularInline):
    model = BattleProposal
    extra = 0
    readonly_fields = ("by", "to", "action", "status", "made_at", "answered_at", "answered_by")
    can_delete = False


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
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
