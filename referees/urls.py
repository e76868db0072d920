from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from referees import judge_pages, player_pages, views

app_name = "referees"

urlpatterns: list[URLPattern | URLResolver] = [
    path("me/", views.me, name="me"),
    path("tournaments/<int:tournament_id>/join-sheet", views.join_sheet, name="join_sheet"),
    path("tournaments/<int:tournament_id>/judge/", judge_pages.judge_console, name="judge"),
    path("tournaments/<int:tournament_id>/screen/", judge_pages.big_screen, name="screen"),
    path("tournaments/<int:tournament_id>/history/", judge_pages.history, name="history"),
    path("tournaments/<int:tournament_id>/general/", player_pages.general_page, name="general"),
    path("tournaments/<int:tournament_id>/clan/", player_pages.clan_page, name="clan"),
]
