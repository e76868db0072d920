from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from battles.web import pages

app_name = "battles"

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "tournaments/<int:tournament_id>/battles/small-farms/",
        pages.small_farm_sheet,
        name="small_farms",
    ),
    path(
        "tournaments/<int:tournament_id>/battles/<int:battle_id>/",
        pages.battle_table,
        name="table",
    ),
]
