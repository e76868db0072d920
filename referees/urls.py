from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from referees import (
    home_pages,
    judge_pages,
    judges_pages,
    paper_pages,
    player_pages,
    positions_pages,
    replay_pages,
    roster_pages,
    setup_pages,
    views,
)

app_name = "referees"

urlpatterns: list[URLPattern | URLResolver] = [
    path("me/", views.me, name="me"),
    path("judge/", home_pages.judge_home, name="judge_home"),
    path("tournaments/new", setup_pages.tournament_new_page, name="tournament_new"),
    path(
        "tournaments/<int:tournament_id>/settings",
        setup_pages.tournament_settings_page,
        name="tournament_settings",
    ),
    path("tournaments/<int:tournament_id>/join-sheet", views.join_sheet, name="join_sheet"),
    path("tournaments/<int:tournament_id>/judge/", judge_pages.judge_console, name="judge"),
    path(
        "tournaments/<int:tournament_id>/turn-pack",
        paper_pages.turn_pack_page,
        name="turn_pack",
    ),
    path(
        "tournaments/<int:tournament_id>/paper-orders",
        paper_pages.paper_orders_page,
        name="paper_orders",
    ),
    path("tournaments/<int:tournament_id>/judges/", judges_pages.judges_page, name="judges"),
    path(
        "tournaments/<int:tournament_id>/judges/add",
        judges_pages.judge_add_page,
        name="judge_add",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/invite",
        judges_pages.judge_invite_page,
        name="judge_invite",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/remove",
        judges_pages.judge_remove_page,
        name="judge_remove",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/link",
        judges_pages.judge_link_page,
        name="judge_link",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/keys",
        judges_pages.judge_key_create_page,
        name="judge_key_create",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/keys/revoke",
        judges_pages.judge_key_revoke_page,
        name="judge_key_revoke",
    ),
    path(
        "tournaments/<int:tournament_id>/players/add",
        roster_pages.players_add,
        name="players_add",
    ),
    path(
        "tournaments/<int:tournament_id>/players/<int:player_id>/",
        roster_pages.player_edit,
        name="player_edit",
    ),
    path("tournaments/<int:tournament_id>/screen/", judge_pages.big_screen, name="screen"),
    path("tournaments/<int:tournament_id>/history/", judge_pages.history, name="history"),
    # Issue 32: the campaign turn by turn on the big screen, and the same as one file.
    path(
        "tournaments/<int:tournament_id>/screen/replay",
        replay_pages.campaign_replay,
        name="replay",
    ),
    path(
        "tournaments/<int:tournament_id>/report.html",
        replay_pages.campaign_report,
        name="report",
    ),
    path("tournaments/<int:tournament_id>/general/", player_pages.general_page, name="general"),
    path("tournaments/<int:tournament_id>/clan/", player_pages.clan_page, name="clan"),
    path(
        "tournaments/<int:tournament_id>/positions/",
        positions_pages.positions_page,
        name="positions",
    ),
]
