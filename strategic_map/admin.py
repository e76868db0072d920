from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from strategic_map.models import Map


@admin.register(Map)
class MapAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "slug")
    # Maps are imported (and validated) with `manage.py loadmap`, never edited by hand.
    readonly_fields = ("slug", "name", "data", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
