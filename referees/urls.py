from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from referees.pages import (
    console,
    history,
    home,
    join,
    judges,
    paper,
    players,
    positions,
    replay,
    roster,
    screen,
    setup,
)

app_name = "referees"

urlpatterns: list[URLPattern | URLResolver] = [
    path("me/", join.me, name="me"),
    path("judge/", home.judge_home, name="judge_home"),
    path("tournaments/new", setup.tournament_new_page, name="tournament_new"),
    path(
        "tournaments/<int:tournament_id>/settings",
        setup.tournament_settings_page,
        name="tournament_settings",
    ),
    path("tournaments/<int:tournament_id>/join-sheet", join.join_sheet, name="join_sheet"),
    path("tournaments/<int:tournament_id>/judge/", console.judge_console, name="judge"),
    path(
        "tournaments/<int:tournament_id>/turn-pack",
        paper.turn_pack_page,
        name="turn_pack",
    ),
    path(
        "tournaments/<int:tournament_id>/paper-orders",
        paper.paper_orders_page,
        name="paper_orders",
    ),
    path("tournaments/<int:tournament_id>/judges/", judges.judges_page, name="judges"),
    path(
        "tournaments/<int:tournament_id>/judges/add",
        judges.judge_add_page,
        name="judge_add",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/invite",
        judges.judge_invite_page,
        name="judge_invite",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/remove",
        judges.judge_remove_page,
        name="judge_remove",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/link",
        judges.judge_link_page,
        name="judge_link",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/keys",
        judges.judge_key_create_page,
        name="judge_key_create",
    ),
    path(
        "tournaments/<int:tournament_id>/judges/keys/revoke",
        judges.judge_key_revoke_page,
        name="judge_key_revoke",
    ),
    path(
        "tournaments/<int:tournament_id>/players/add",
        roster.players_add,
        name="players_add",
    ),
    path(
        "tournaments/<int:tournament_id>/players/<int:player_id>/",
        roster.player_edit,
        name="player_edit",
    ),
    path("tournaments/<int:tournament_id>/screen/", screen.big_screen, name="screen"),
    path("tournaments/<int:tournament_id>/history/", history.history, name="history"),
    # Issue 32: the campaign turn by turn on the big screen, and the same as one file.
    path(
        "tournaments/<int:tournament_id>/screen/replay",
        replay.campaign_replay,
        name="replay",
    ),
    path(
        "tournaments/<int:tournament_id>/report.html",
        replay.campaign_report,
        name="report",
    ),
    path("tournaments/<int:tournament_id>/general/", players.general_page, name="general"),
    path("tournaments/<int:tournament_id>/clan/", players.clan_page, name="clan"),
    path(
        "tournaments/<int:tournament_id>/positions/",
        positions.positions_page,
        name="positions",
    ),
]
