"""referees.forms.roster and referees.services.roster: lists of players read, previewed
under R1 and stored all at once or not at all; a player renamed, moved, removed or
replaced, each logged; the API over them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from referees import services
from referees.forms.roster import (
    MAX_TEXT,
    roster_csv_decode,
    roster_lines,
    roster_parse,
    roster_parse_csv,
)
from referees.kernel.core import TournamentError
from referees.models import LogEntry, Player
from referees.services import roster
from referees.services.players import player_move, player_remove, player_rename, player_replace
from sl5r.api_errors import error_status
from sl5r.rules.roles import Role
from strategic_map.models import Army
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def lines(text: str) -> list[roster.RosterLine]:
    return roster_parse(text)


def count(game: Game) -> int:
    return Player.objects.filter(tournament=game.tournament).count()


def preview(game: Game, text: str) -> roster.RosterPreview:
    return roster.roster_preview(tournament=game.refresh(), lines=lines(text))


def register(game: Game, text: str) -> list[Player]:
    return roster.roster_register(
        tournament_id=game.id, lines=lines(text), actor=game.judge_actor, now=timezone.now()
    )


def armies(game: Game, clan: str) -> list[str]:
    return sorted(
        Army.objects.filter(campaign=game.refresh().campaign, clan=clan).values_list(
            "code", flat=True
        )
    )


def army_of(player: Player) -> str | None:
    return player.army.code if player.army else None


def log(game: Game, action: str) -> list[dict[str, Any]]:
    return [e.data for e in LogEntry.objects.filter(tournament=game.tournament, action=action)]


# --- Reading a pasted list -------------------------------------------------------------------


def test_paste_reads_one_player_a_line_skipping_blank_lines_and_comments() -> None:
    parsed = lines("# the Crab table\n\nIvan Petrov; Crab; General\n   \nOleg\n# end\n")

    assert parsed == [
        roster.RosterLine(3, "Ivan Petrov", "Crab", "General"),
        roster.RosterLine(5, "Oleg"),
    ]


def test_paste_splits_on_semicolons_first_then_tabs_then_commas() -> None:
    parsed = lines("Petrov, Ivan; crab; general\nAnna\tcrane\tdaimyo\nOleg, lion, general")

    assert [(p.name, p.clan, p.role) for p in parsed] == [
        ("Petrov, Ivan", "crab", "general"),
        ("Anna", "crane", "daimyo"),
        ("Oleg", "lion", "general"),
    ]


def test_paste_keeps_an_empty_name_and_extra_cells_for_the_preview_to_name() -> None:
    parsed = lines("\tcrab\tgeneral\nIvan; crab; general; extra")

    assert parsed[0].name == "" and parsed[0].clan == "crab"
    assert parsed[1].extra == ("extra",)


def test_paste_ignores_a_byte_order_mark() -> None:
    assert lines("\ufeffIvan; crab")[0].name == "Ivan"


# --- Reading a CSV file ----------------------------------------------------------------------


def test_csv_with_a_header_a_bom_and_russian_clan_names() -> None:
    text = roster_csv_decode("\ufeffname,clan,role\nИван,Краб,Генерал\nАнна,Журавль,\n".encode())

    parsed = roster_parse_csv(text)

    assert [(p.number, p.name, p.clan, p.role) for p in parsed] == [
        (2, "Иван", "Краб", "Генерал"),
        (3, "Анна", "Журавль", ""),
    ]


def test_csv_sniffs_semicolons_and_reads_a_russian_header_in_any_order() -> None:
    parsed = roster_parse_csv('роль;имя;клан\nдаймё;"Смит; Джон";Лев\n')

    assert [(p.name, p.clan, p.role) for p in parsed] == [("Смит; Джон", "Лев", "даймё")]


def test_csv_without_a_header_is_name_clan_role() -> None:
    parsed = roster_parse_csv("Ivan,crab,general\n\nOleg,,\n")

    assert [(p.number, p.name, p.clan, p.role) for p in parsed] == [
        (1, "Ivan", "crab", "general"),
        (3, "Oleg", "", ""),
    ]


def test_csv_from_a_russian_spreadsheet_in_windows_1251_is_read() -> None:
    text = roster_csv_decode("Иван;Краб;Генерал\n".encode("cp1251"))

    assert roster_parse_csv(text)[0].clan == "Краб"


def test_a_binary_file_is_refused_as_not_csv() -> None:
    with pytest.raises(TournamentError, match="file: this is not a text file"):
        roster_csv_decode(b"PK\x03\x04\x00\x00")


def test_a_list_too_long_is_refused() -> None:
    with pytest.raises(TournamentError, match="lines: at most") as refused:
        roster_lines("x" * (MAX_TEXT + 1))
    assert error_status(refused.value) == 413


# --- The preview -----------------------------------------------------------------------------


def test_preview_reads_clans_and_roles_in_english_or_russian_in_any_case(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(32, phase="setup", lineup={})

    result = preview(
        game,
        "A; CRAB; general\nB; краб; ГЕНЕРАЛ\nC; Журавль; Даймё\nD; crane; даймe\nE; Shadow lands",
    )

    assert [(r.clan, r.role) for r in result.rows[:3]] == [
        ("crab", Role.GENERAL),
        ("crab", Role.GENERAL),
        ("crane", Role.DAIMYO),
    ]
    assert result.rows[3].problems  # a second Daimyo for the Crane
    assert result.rows[4].clan == "shadowlands"


def test_preview_marks_what_r1_proposed_and_the_army_a_general_gets(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(24, phase="setup", lineup={"crab": ["general"]})

    result = preview(game, "A; crab\nB; crab\nC\nD; crane; daimyo")

    rows = result.rows
    assert (rows[0].clan, rows[0].role, rows[0].army) == ("crab", Role.GENERAL, "crab-2")
    assert not rows[0].proposed_clan and rows[0].proposed_role
    assert (rows[1].role, rows[1].army) == (Role.DAIMYO, None)
    assert rows[2].proposed_clan and rows[2].proposed_role
    # D's own choice (the Crane's Daimyo) is placed before R1 proposes a clan for C.
    assert rows[2].clan == "dragon" and rows[2].army == "dragon-1"
    assert (rows[3].proposed_clan, rows[3].proposed_role) == (False, False)
    assert result.ok


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("; crab; general", "name: the line has no name", id="empty-name"),
        pytest.param("Ivan\nivan ", "name: ivan is also on line 1", id="duplicate-in-list"),
        pytest.param("Crab general 1", "is already registered", id="duplicate-registered"),
        pytest.param("Ivan; Krab", 'clan: unknown clan "Krab"', id="unknown-clan"),
        pytest.param("Ivan; crab; shogun", 'role: unknown role "shogun"', id="unknown-role"),
        pytest.param("Ivan; crab; general; x", "too many columns", id="too-many-columns"),
        pytest.param("Ivan; crab; daimyo", "R1 gives no clan a Daimyo", id="role-not-given"),
        pytest.param("Ivan; crab", "the clan is full", id="clan-full"),
        pytest.param("Ivan; crab; general", "at most 2 Generals, not 3", id="role-full"),
        pytest.param("Ivan; ; daimyo", "no clan has a place left for a Daimyo", id="role-nowhere"),
    ],
)
def test_preview_names_each_problem_on_its_line_and_stores_nothing(
    make_game: Callable[..., Game], text: str, problem: str
) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general", "general"]})

    result = preview(game, text)

    assert not result.ok
    assert any(problem in p for p in result.problems), result.problems
    assert result.problems[0].startswith(f"line {result.rows[-1].number}: ")
    assert count(game) == 2


def test_preview_refuses_a_clan_left_out_by_r1_a(make_game: Callable[..., Game]) -> None:
    game = make_game(20, phase="setup", lineup={}, shortfall="exclude_shadowlands")

    result = preview(game, "Ivan; Теневые Земли")

    assert result.rows[0].problems == ("the Shadowlands are not in this tournament (R1 a)",)


def test_preview_refuses_lines_beyond_the_places_left(make_game: Callable[..., Game]) -> None:
    game = make_game(8, phase="setup", lineup={"crab": ["general"]})
    names = "\n".join(f"P{i}" for i in range(9))

    result = preview(game, names)

    assert [r.problems for r in result.rows[:7]] == [()] * 7
    assert result.rows[7].problems == (
        "more players than places: the tournament is for 8 players and 7 places were left",
    )
    assert count(game) == 1


def test_preview_and_bulk_registration_only_during_set_up(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="planning")

    with pytest.raises(TournamentError, match="during set-up only") as refused:
        preview(game, "Ivan")
    assert error_status(refused.value) == 409
    with pytest.raises(TournamentError, match="during set-up only"):
        register(game, "Ivan")


# --- Registering all or none -----------------------------------------------------------------


def test_register_stores_every_line_with_its_army_and_a_log_line_each(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="setup", lineup={})

    stored = register(game, "Ivan; crab\nOleg; crab\nAnna")

    assert [(p.name, p.clan, p.army.code if p.army else None) for p in stored] == [
        ("Ivan", "crab", "crab-1"),
        ("Oleg", "crab", "crab-2"),
        ("Anna", "crane", "crane-1"),
    ]
    assert [e["name"] for e in log(game, "player_registered")] == ["Ivan", "Oleg", "Anna"]
    assert all(services.player_token(p) for p in stored)


def test_register_stores_nothing_when_one_line_is_wrong_and_names_every_bad_line(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="setup", lineup={})

    with pytest.raises(roster.RosterRefused) as refused:
        register(game, "Ivan; crab\nOleg; crab; daimyo\nAnna\n; lion")

    assert error_status(refused.value) == 422
    message = refused.value.message
    assert message.startswith("players: nothing was registered: line 2: ")
    assert "; line 4: name: the line has no name" in message
    assert count(game) == 0
    assert not Army.objects.filter(campaign=game.tournament.campaign).exists()
    assert not log(game, "player_registered")


def test_register_refuses_an_empty_list(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="setup", lineup={})

    with pytest.raises(TournamentError, match="the list is empty"):
        register(game, "# nobody yet\n")


# --- Rename ----------------------------------------------------------------------------------


def test_rename_in_any_phase_is_logged_with_the_old_name(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    player_rename(
        tournament_id=game.id,
        player_id=player.pk,
        name="  Ivan   Petrov ",
        actor=game.judge_actor,
        now=timezone.now(),
    )

    assert Player.objects.get(pk=player.pk).name == "Ivan Petrov"
    assert log(game, "player_renamed") == [
        {"player": player.pk, "old_name": player.name, "name": "Ivan Petrov"}
    ]


def test_rename_refuses_an_empty_name_and_another_players_name(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="setup")
    player, other = game.player("crab"), game.player("crane")
    rename = player_rename

    with pytest.raises(TournamentError, match="name: give the player's name"):
        rename(
            tournament_id=game.id,
            player_id=player.pk,
            name=" ",
            actor=game.judge_actor,
            now=timezone.now(),
        )
    with pytest.raises(TournamentError, match="is already registered"):
        rename(
            tournament_id=game.id,
            player_id=player.pk,
            name=other.name.upper(),
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert Player.objects.get(pk=player.pk).name == player.name


def test_a_player_of_another_tournament_is_not_found(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="setup")
    other = make_game(16, phase="setup", name="Other")

    with pytest.raises(TournamentError) as refused:
        player_rename(
            tournament_id=game.id,
            player_id=other.players[0].pk,
            name="X",
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert error_status(refused.value) == 404


# --- Move ------------------------------------------------------------------------------------


def move(game: Game, player: Player, clan: str, role: str) -> Player:
    return player_move(
        tournament_id=game.id,
        player_id=player.pk,
        clan=clan,
        role=role,
        actor=game.judge_actor,
        now=timezone.now(),
    )


def test_a_general_moved_to_another_clan_gets_an_army_there_and_codes_stay_1_to_n(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(
        24, phase="setup", lineup={"crab": ["general", "general"], "crane": ["general"]}
    )
    first = game.player("crab", n=1)

    moved = move(game, first, "crane", "general")

    assert moved.army is not None and moved.army.code == "crane-2"
    assert armies(game, "crab") == ["crab-1"]
    assert armies(game, "crane") == ["crane-1", "crane-2"]
    assert army_of(game.player("crab", n=2)) == "crab-1"
    entry = log(game, "player_moved")[0]
    assert (entry["old_clan"], entry["clan"]) == ("crab", "crane")
    assert (entry["old_army"], entry["army"]) == ("crab-1", "crane-2")
    assert entry["renumbered"] == {"crab-2": "crab-1"}


def test_a_general_who_becomes_daimyo_loses_his_army_and_back_gets_one(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(24, phase="setup", lineup={"crab": ["general", "general"]})
    first = game.player("crab", n=1)

    daimyo = move(game, first, "crab", "daimyo")
    assert daimyo.army is None
    assert armies(game, "crab") == ["crab-1"]

    general = move(game, daimyo, "crab", "general")
    assert general.army is not None and general.army.code == "crab-2"
    assert armies(game, "crab") == ["crab-1", "crab-2"]


def test_a_move_r1_does_not_allow_is_refused_with_the_reason_and_changes_nothing(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(
        16, phase="setup", lineup={"crab": ["general", "general"], "lion": ["general"]}
    )
    lion = game.player("lion")

    with pytest.raises(TournamentError, match="R1 gives no clan a Daimyo"):
        move(game, lion, "lion", "daimyo")
    with pytest.raises(TournamentError, match="at most 2 Generals, not 3"):
        move(game, lion, "crab", "general")

    again = game.player("lion")
    assert (again.clan, again.role, army_of(again)) == ("lion", "general", "lion-1")
    assert not log(game, "player_moved")


def test_a_move_to_a_clan_out_of_the_game_or_unknown_is_refused(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(
        20, phase="setup", lineup={"crab": ["general"]}, shortfall="exclude_shadowlands"
    )
    crab = game.player("crab")

    with pytest.raises(TournamentError, match="not in this tournament"):
        move(game, crab, "shadowlands", "general")
    with pytest.raises(TournamentError, match="unknown clan"):
        move(game, crab, "mantis", "general")
    with pytest.raises(TournamentError, match="unknown role"):
        move(game, crab, "crab", "shogun")


def test_a_move_after_the_start_is_refused(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="planning")

    with pytest.raises(TournamentError, match="during set-up only") as refused:
        move(game, game.player("crab"), "crane", "general")
    assert error_status(refused.value) == 409


def test_players_moved_around_still_make_a_line_up_that_starts(
    make_game: Callable[..., Game],
) -> None:
    """The army codes a move renumbers are the ones later registrations continue."""
    game = make_game(16, phase="setup", lineup={})
    register(game, "\n".join(f"P{i}" for i in range(15)))
    first = Player.objects.get(tournament=game.tournament, name="P0")  # crab-1
    player_remove(
        tournament_id=game.id, player_id=first.pk, actor=game.judge_actor, now=timezone.now()
    )
    register(game, "Late; crab\nLater")

    assert armies(game, "crab") == ["crab-1", "crab-2"]
    services.tournament_start(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


# --- Remove ----------------------------------------------------------------------------------


def test_remove_during_set_up_deletes_the_player_and_his_army_and_renumbers(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(48, phase="setup", lineup={"crab": ["general"] * 4})
    second = game.player("crab", n=2)

    player_remove(
        tournament_id=game.id, player_id=second.pk, actor=game.judge_actor, now=timezone.now()
    )

    assert not Player.objects.filter(pk=second.pk).exists()
    assert armies(game, "crab") == ["crab-1", "crab-2", "crab-3"]
    assert [
        army_of(p) for p in Player.objects.filter(tournament=game.tournament).order_by("id")
    ] == [
        "crab-1",
        "crab-2",
        "crab-3",
    ]
    entry = log(game, "player_removed")[0]
    assert entry["name"] == second.name and entry["army"] == "crab-2"
    assert entry["renumbered"] == {"crab-3": "crab-2", "crab-4": "crab-3"}


def test_remove_after_the_start_is_refused(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    with pytest.raises(TournamentError, match="replace a player instead"):
        player_remove(
            tournament_id=game.id, player_id=player.pk, actor=game.judge_actor, now=timezone.now()
        )
    assert Player.objects.filter(pk=player.pk).exists()


# --- Replace ---------------------------------------------------------------------------------


def replace(game: Game, player: Player, name: str) -> Player:
    return player_replace(
        tournament_id=game.id,
        player_id=player.pk,
        name=name,
        actor=game.judge_actor,
        now=timezone.now(),
    )


def test_replace_keeps_army_clan_and_role_and_issues_a_new_link(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="running")
    leaving = game.player("crab")
    old_token = game.token(leaving)

    newcomer = replace(game, leaving, "Newcomer")

    assert (newcomer.pk, newcomer.clan, newcomer.role) == (leaving.pk, "crab", "general")
    assert newcomer.army_id == leaving.army_id
    assert newcomer.name == "Newcomer"
    new_token = services.player_token(Player.objects.get(pk=leaving.pk))
    assert new_token and new_token != old_token
    assert services.player_from_token(old_token) is None
    assert services.player_from_token(new_token) == newcomer
    assert log(game, "player_replaced") == [
        {
            "player": leaving.pk,
            "old_name": leaving.name,
            "name": "Newcomer",
            "clan": "crab",
            "role": "general",
            "army": army_of(leaving),
        }
    ]
    assert log(game, "join_link_reissued") == [{"player": leaving.pk}]


def test_replace_is_for_a_tournament_under_way(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="setup")

    with pytest.raises(TournamentError, match="rename the player or remove him") as refused:
        replace(game, game.player("crab"), "Newcomer")
    assert error_status(refused.value) == 409


def test_replace_refuses_a_name_already_registered(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="negotiation")

    with pytest.raises(TournamentError, match="is already registered"):
        replace(game, game.player("crab"), game.player("crane").name)


# --- The API ---------------------------------------------------------------------------------


def test_api_bulk_dry_run_answers_the_preview_and_stores_nothing(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="setup", lineup={})

    response = api.post(
        f"/tournaments/{game.id}/players/bulk",
        {"lines": "# two\nIvan; Краб\nOleg", "dry_run": True},
        token=judge_key,
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ok"] is True and body["dry_run"] is True and body["players"] == []
    assert body["lines"][0] == {
        "line": 2,
        "name": "Ivan",
        "clan": "crab",
        "clan_proposed": False,
        "role": "general",
        "role_proposed": True,
        "army": "crab-1",
        "problems": [],
    }
    assert body["lines"][1]["clan"] == "crane" and body["lines"][1]["clan_proposed"]
    assert count(game) == 0


def test_api_bulk_reads_a_csv_text(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="setup", lineup={})

    response = api.post(
        f"/tournaments/{game.id}/players/bulk",
        {"lines": "\ufeffимя;клан;роль\nИван;Лев;Генерал\n", "format": "csv"},
        token=judge_key,
    )

    assert response.status_code == 201, response.content
    assert response.json()["lines"][0]["line"] == 2
    assert Player.objects.get(tournament=game.tournament).clan == "lion"


def test_api_bulk_is_for_judges_only(make_game: Callable[..., Game], api: Api) -> None:
    game = make_game(16, phase="setup", lineup={})
    player = services.player_register(
        tournament=game.tournament,
        name="P",
        clan="crab",
        role="general",
        actor=game.judge_actor,
        now=timezone.now(),
    )

    response = api.post(
        f"/tournaments/{game.id}/players/bulk",
        {"lines": "Ivan"},
        token=services.player_token(player),
    )

    assert response.status_code == 403
    assert count(game) == 1


def test_api_patch_renames_and_moves_a_player(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(24, phase="setup", lineup={"crab": ["general"]})
    player = game.player("crab")

    response = api.call(
        "PATCH",
        f"/tournaments/{game.id}/players/{player.pk}",
        json_body={"name": "Ivan", "clan": "crane", "role": "daimyo"},
        token=judge_key,
    )

    assert response.status_code == 200, response.content
    assert {k: response.json()[k] for k in ("name", "clan", "role", "army")} == {
        "name": "Ivan",
        "clan": "crane",
        "role": "daimyo",
        "army": None,
    }
    assert armies(game, "crab") == []


def test_api_patch_refused_by_r1_changes_nothing_not_even_the_name(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general"]})
    player = game.player("crab")

    response = api.call(
        "PATCH",
        f"/tournaments/{game.id}/players/{player.pk}",
        json_body={"name": "Ivan", "role": "daimyo"},
        token=judge_key,
    )

    assert response.status_code == 400
    assert response.json()["code"] == "lineup"
    assert "R1 gives no clan a Daimyo" in response.json()["detail"]
    assert Player.objects.get(pk=player.pk).name == player.name


def test_api_patch_renames_during_the_game_but_does_not_move(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")
    path = f"/tournaments/{game.id}/players/{player.pk}"

    renamed = api.call("PATCH", path, json_body={"name": "Ivan"}, token=judge_key)
    moved = api.call("PATCH", path, json_body={"clan": "crane"}, token=judge_key)

    assert renamed.status_code == 200 and renamed.json()["name"] == "Ivan"
    assert moved.status_code == 409 and moved.json()["code"] == "phase"


def test_api_replace_answers_the_new_link_and_the_old_one_stops_working(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="running")
    leaving = game.player("lion")
    old_token = game.token(leaving)

    response = api.post(
        f"/tournaments/{game.id}/players/{leaving.pk}/replace",
        {"name": "Newcomer"},
        token=judge_key,
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["name"] == "Newcomer" and body["army"] == army_of(leaving)
    assert body["token"] != old_token and body["join_url"].endswith(body["token"])
    assert api.get("/me", token=old_token).status_code == 401
    assert api.get("/me", token=body["token"]).json()["player"]["name"] == "Newcomer"


def test_api_delete_removes_a_player_during_set_up(
    make_game: Callable[..., Game], api: Api, judge_key: str
) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general", "general"]})
    first = game.player("crab")

    response = api.delete(f"/tournaments/{game.id}/players/{first.pk}", token=judge_key)

    assert response.status_code == 200, response.content
    assert armies(game, "crab") == ["crab-1"]
    assert count(game) == 1
