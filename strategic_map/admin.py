from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest

from strategic_map.models import Map

# ModelAdmin is generic in django-stubs only; Django's class cannot be subscripted.
if TYPE_CHECKING:
    _MapModelAdmin = admin.ModelAdmin[Map]
else:
    _MapModelAdmin = admin.ModelAdmin


@admin.register(Map)
class MapAdmin(_MapModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "slug")
    # Maps are imported (and validated) with `manage.py loadmap`, never edited by hand.
    readonly_fields = ("slug", "name", "data", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
