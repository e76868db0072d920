"""The new-tournament page and a tournament's settings page (referees/pages/setup.py).

Every option the API has, each refusal next to its field, an uploaded map checked as
``loadmap`` checks it (nothing stored on any problem), and the line-up R1 gives (R1)
shown before anything is created.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees.models import LogEntry, Tournament
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Map
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

NEW = "/referees/tournaments/new"


def settings_url(game: Game) -> str:
    return reverse("referees:tournament_settings", args=[game.id])


def form(**fields: Any) -> dict[str, Any]:
    """What the browser sends for the page's defaults, with ``fields`` changed."""
    data: dict[str, Any] = {
        "name": "Winter Court",
        "map": "rokugan",
        "player_count": "16",
        "shortfall": "smaller_clans",
        "three_variant": "generals_and_daimyo",
        "turn_minutes": "15",
        "ends_by": "turns",
        "turns_total": "14",
        "ends_at": "",
        "planning_minutes": "5",
        "negotiation_minutes": "15",
        "clan_abilities": "on",
        "base_hand": "5",
        "battle_game": "l5r",
        "bushido_turns": "4",
        "time_zone": "UTC",
    }
    for name, value in fields.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def field_errors(response: HttpResponse, name: str) -> list[str]:
    """The problems the page shows under the field ``name``, one per line."""
    found = re.search(
        rf'<ul class="errorlist" id="id_{name}_error">(.*?)</ul>',
        response.content.decode(),
        re.S,
    )
    if found is None:
        return []
    return [html_lib.unescape(li) for li in re.findall(r"<li>(.*?)</li>", found.group(1), re.S)]


def lineup_rows(response: HttpResponse) -> dict[str, tuple[str, str]]:
    """The line-up table: each clan's roles and its note."""
    body = re.search(r'<tbody id="lineup-body">(.*?)</tbody>', response.content.decode(), re.S)
    assert body, "no line-up table"
    rows = {}
    for clan, cells in re.findall(r'<tr data-clan="(\w+)"[^>]*>(.*?)</tr>', body.group(1), re.S):
        roles, note = re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)
        rows[clan] = (html_lib.unescape(roles.strip()), html_lib.unescape(note.strip()))
    return rows


def lineup_problem(response: HttpResponse) -> str:
    found = re.search(
        r'<p [^>]*id="lineup-problem"[^>]*>(.*?)</p>', response.content.decode(), re.S
    )
    assert found
    return html_lib.unescape(found.group(1))


def checked(response: HttpResponse, name: str) -> list[str]:
    """The values of the radio buttons or boxes named ``name`` that are ticked."""
    found = []
    for tag in re.findall(rf'<input [^>]*name="{name}"[^>]*>', response.content.decode()):
        if re.search(r"\schecked\b", tag):
            value = re.search(r'value="([^"]*)"', tag)
            found.append(value.group(1) if value else "on")
    return found


def lineup_notes(response: HttpResponse) -> str:
    found = re.search(r'<div id="lineup-notes">(.*?)</div>', response.content.decode(), re.S)
    assert found
    return html_lib.unescape(found.group(1))


def map_file(data: Any, name: str = "valley.json") -> SimpleUploadedFile:
    content = data if isinstance(data, bytes) else json.dumps(data).encode()
    return SimpleUploadedFile(name, content, content_type="application/json")


def small_map(map_id: str = "valley") -> dict[str, Any]:
    data = rokugan_map().to_dict()
    data["id"] = map_id
    data["name"] = "The Valley"
    return data


@pytest.fixture
def judge(client: Client, rokugan: Map, judge_user: AbstractBaseUser) -> Client:
    client.force_login(judge_user)
    return client


# --- Who may -------------------------------------------------------------------------------


def test_a_stranger_is_sent_to_sign_in_first(client: Client, rokugan: Map) -> None:
    response = client.get(NEW)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("sign_in"))
    assert "next=/referees/tournaments/new" in response["Location"]


def test_the_page_offers_every_option_with_the_bundled_map_chosen(judge: Client) -> None:
    response = judge.get(NEW)

    assert response.status_code == 200
    page = response.content.decode()
    for name in (
        "name",
        "map",
        "map_file",
        "map_slug",
        "player_count",
        "shortfall",
        "three_variant",
        "turn_minutes",
        "ends_by",
        "turns_total",
        "ends_at",
        "planning_minutes",
        "negotiation_minutes",
        "clan_abilities",
        "base_hand",
        "battle_game",
        "bushido_turns",
        "time_zone",
    ):
        assert f'name="{name}"' in page, name
    assert '<option value="rokugan" selected>' in page
    assert 'type="datetime-local"' in page
    assert '<option value="Europe/Moscow">' in page
    assert 'src="/static/js/tournament_form.js"' in page


def test_the_time_zone_defaults_to_the_sites_own(judge: Client, settings: Any) -> None:
    settings.TIME_ZONE = "Europe/Moscow"

    page = judge.get(NEW).content.decode()

    assert '<option value="Europe/Moscow" selected>' in page


# --- Creating ------------------------------------------------------------------------------


def test_creating_sends_the_judge_to_the_console_of_his_new_tournament(
    judge: Client, judge_user: AbstractBaseUser
) -> None:
    response = judge.post(NEW, form())

    tournament = Tournament.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("referees:judge", args=[tournament.pk])
    assert list(tournament.judges.all()) == [judge_user]
    assert tournament.phase == "setup"
    assert tournament.campaign.map.slug == "rokugan"
    assert LogEntry.objects.filter(tournament=tournament, action="tournament_created").exists()


def test_every_option_is_stored_as_chosen(judge: Client) -> None:
    response = judge.post(
        NEW,
        form(
            name="  Spring Court  ",
            player_count="21",
            shortfall="exclude_shadowlands",
            three_variant="three_generals",
            turn_minutes="7.5",
            turns_total="9",
            planning_minutes="3",
            negotiation_minutes="10",
            clan_abilities=None,
            base_hand="6",
            battle_game="bushido",
            bushido_turns="6",
            time_zone="Asia/Tokyo",
        ),
    )

    assert response.status_code == 302, field_errors(response, "player_count")
    t = Tournament.objects.select_related("campaign").get()
    assert (t.name, t.player_count, t.shortfall, t.three_variant) == (
        "Spring Court",
        21,
        "exclude_shadowlands",
        "three_generals",
    )
    assert (t.turn_seconds, t.turns_total, t.ends_at) == (450, 9, None)
    assert (t.planning_seconds, t.negotiation_seconds) == (180, 600)
    assert (t.battle_game, t.bushido_turns, t.time_zone) == ("bushido", 6, "Asia/Tokyo")
    assert (t.campaign.clan_abilities, t.campaign.base_hand) == (False, 6)
    assert t.campaign.excluded_clans == ["shadowlands"]  # R1 a


def test_the_end_time_is_read_in_the_chosen_time_zone(judge: Client) -> None:
    response = judge.post(
        NEW, form(ends_by="time", ends_at="2099-05-01T18:00", time_zone="Europe/Moscow")
    )

    assert response.status_code == 302
    t = Tournament.objects.get()
    assert t.ends_at == datetime(2099, 5, 1, 15, 0, tzinfo=dt_timezone.utc)
    assert t.turns_total is None


def test_the_game_may_end_after_its_turns_or_at_its_time_whichever_comes_first(
    judge: Client,
) -> None:
    response = judge.post(NEW, form(ends_by="either", turns_total="12", ends_at="2099-05-01T18:00"))

    assert response.status_code == 302
    t = Tournament.objects.get()
    assert t.turns_total == 12
    assert t.ends_at == datetime(2099, 5, 1, 18, 0, tzinfo=dt_timezone.utc)


# --- Refusals, each next to its field; nothing stored ---------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"turn_minutes": "0"}, "turn_minutes", "greater than or equal to"),
        ({"turn_minutes": "600"}, "turn_minutes", "less than or equal to 240"),
        ({"turn_minutes": "soon"}, "turn_minutes", "Enter a number"),
        (
            {"ends_by": "time", "ends_at": "2001-01-01T10:00"},
            "ends_at",
            "the end time has already passed",
        ),
        ({"ends_by": "time", "ends_at": ""}, "ends_at", "give the time the game ends"),
        ({"ends_by": "turns", "turns_total": ""}, "turns_total", "give the number of turns"),
        ({"time_zone": "Mars/Olympus"}, "time_zone", 'unknown time zone "Mars/Olympus"'),
        ({"player_count": "7"}, "player_count", "7 players are too few"),
        ({"player_count": "50"}, "player_count", "50 players are too many"),
        ({"name": "   "}, "name", "This field is required"),
        ({"bushido_turns": "11"}, "bushido_turns", "less than or equal to 10"),
        ({"base_hand": "7"}, "base_hand", "Select a valid choice"),
        ({"map": "atlantis"}, "map", "Select a valid choice"),
    ],
)
def test_a_refused_setting_is_shown_next_to_its_field_and_nothing_is_stored(
    judge: Client, fields: dict[str, str], field: str, says: str
) -> None:
    response = judge.post(NEW, form(**fields))

    assert response.status_code == 400
    problems = field_errors(response, field)
    assert any(says in p for p in problems), problems
    assert 'id="form-problems"' in response.content.decode()
    assert not Tournament.objects.exists()


def test_a_refusal_keeps_what_the_judge_typed(judge: Client) -> None:
    response = judge.post(NEW, form(name="Kept name", player_count="7"))

    assert 'value="Kept name"' in response.content.decode()


def test_seven_players_fit_when_the_shadowlands_are_left_out(judge: Client) -> None:
    """R1 a: seven clans of one General each."""
    response = judge.post(NEW, form(player_count="7", shortfall="exclude_shadowlands"))

    assert response.status_code == 302
    assert Tournament.objects.get().campaign.excluded_clans == ["shadowlands"]


# --- An uploaded map -----------------------------------------------------------------------


def test_an_uploaded_map_is_stored_under_its_id_and_played_on(judge: Client) -> None:
    response = judge.post(NEW, {**form(map=None), "map_file": map_file(small_map())})

    assert response.status_code == 302, field_errors(response, "map_file")
    stored = Map.objects.get(slug="valley")
    assert stored.name == "The Valley"
    assert Tournament.objects.get().campaign.map == stored


def test_an_uploaded_map_goes_under_the_slug_given(judge: Client) -> None:
    response = judge.post(NEW, {**form(map_slug="my-valley"), "map_file": map_file(small_map())})

    assert response.status_code == 302
    assert Tournament.objects.get().campaign.map.slug == "my-valley"


def test_a_map_without_an_id_is_stored_under_a_slug_made_from_its_name(judge: Client) -> None:
    data = small_map()
    del data["id"]

    judge.post(NEW, {**form(), "map_file": map_file(data)})

    assert Tournament.objects.get().campaign.map.slug == "the-valley"


def test_a_map_the_engine_refuses_is_shown_as_loadmap_names_it_and_nothing_is_stored(
    judge: Client,
) -> None:
    data = small_map()
    data["borders"].append([data["provinces"][0]["id"], "nowhere"])

    response = judge.post(NEW, {**form(), "map_file": map_file(data, "broken.json")})

    assert response.status_code == 400
    assert field_errors(response, "map_file") == [
        f'broken.json: map.borders[{len(data["borders"]) - 1}]: unknown province "nowhere"'
    ]
    assert not Map.objects.filter(slug="valley").exists()
    assert not Tournament.objects.exists()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{not json", "broken.json: not valid JSON: "),
        (b"[1, 2]", "broken.json: the map must be a JSON object"),
        (b"\xff\xfe\x00", "broken.json: not a text file in UTF-8"),
    ],
)
def test_a_file_that_is_no_map_is_refused_with_the_reason(
    judge: Client, content: bytes, says: str
) -> None:
    response = judge.post(NEW, {**form(), "map_file": map_file(content, "broken.json")})

    assert response.status_code == 400
    problems = field_errors(response, "map_file")
    assert len(problems) == 1 and problems[0].startswith(says), problems
    assert Map.objects.count() == 1
    assert not Tournament.objects.exists()


def test_every_map_problem_is_on_its_own_line(judge: Client) -> None:
    """A bad map under a slug already taken: each field names its own problem."""
    data = small_map("rokugan")
    data["provinces"][0]["home_clan"] = "ninja"

    response = judge.post(NEW, {**form(), "map_file": map_file(data, "two.json")})

    assert response.status_code == 400
    assert field_errors(response, "map_file") == [
        'two.json: map.provinces[0].home_clan: unknown clan "ninja"'
    ]
    assert field_errors(response, "map_slug") == [
        'there is a map "rokugan" already; give the new map another slug'
    ]
    assert Map.objects.get(slug="rokugan").name != "The Valley"
    assert not Tournament.objects.exists()


def test_an_uploaded_map_under_a_taken_slug_is_refused(judge: Client) -> None:
    response = judge.post(NEW, {**form(), "map_file": map_file(small_map("rokugan"))})

    assert response.status_code == 400
    assert field_errors(response, "map_slug") == [
        'there is a map "rokugan" already; give the new map another slug'
    ]
    assert Map.objects.get(slug="rokugan").name != "The Valley"


def test_a_map_that_cannot_seat_the_line_up_leaves_no_map_behind(judge: Client) -> None:
    """R1, R3.2: the import and the tournament are one transaction."""
    data = small_map()
    for province in data["provinces"]:
        if province["home_clan"] == "crab":
            province["home_clan"] = None

    response = judge.post(NEW, {**form(), "map_file": map_file(data)})

    assert response.status_code == 422
    problems = field_errors(response, "map_file")
    assert any("the crab have 0 home provinces" in p for p in problems), problems
    assert not Map.objects.filter(slug="valley").exists()
    assert not Tournament.objects.exists()


# --- The line-up R1 gives, before creating (R1) --------------------------------------------


def preview(judge: Client, **fields: str) -> HttpResponse:
    response = judge.post(NEW, {**form(**fields), "preview": "1"})
    assert response.status_code == 200
    assert not Tournament.objects.exists()
    return response


def test_r1_the_page_shows_the_line_up_of_the_default_count(judge: Client) -> None:
    rows = lineup_rows(judge.get(NEW))

    assert rows["crab"] == ("2 Generals", "")
    assert len(rows) == 8


def test_r1_preview_of_16_players_two_generals_in_every_clan(judge: Client) -> None:
    response = preview(judge, player_count="16")

    assert set(lineup_rows(response).values()) == {("2 Generals", "")}
    assert lineup_notes(response) == "<p>A full clan has 2 Generals.</p>"


@pytest.mark.parametrize(
    ("variant", "roles"),
    [("generals_and_daimyo", "2 Generals, 1 Daimyo"), ("three_generals", "3 Generals")],
)
def test_r1_preview_of_24_players_in_either_variant(
    judge: Client, variant: str, roles: str
) -> None:
    response = preview(judge, player_count="24", three_variant=variant)

    assert set(lineup_rows(response).values()) == {(roles, "")}


def test_r1b_preview_of_20_players_marks_the_smaller_clans_and_says_any_may_be(
    judge: Client,
) -> None:
    response = preview(judge, player_count="20", shortfall="smaller_clans")

    rows = lineup_rows(response)
    smaller = sorted(c for c, (_roles, note) in rows.items() if note)
    assert smaller == ["phoenix", "scorpion", "shadowlands", "unicorn"]
    assert rows["unicorn"] == ("2 Generals", "one fewer by default (R1 b)")
    assert rows["crab"] == ("2 Generals, 1 Daimyo", "")
    notes = lineup_notes(response)
    assert "4 clans have one member fewer (2 Generals)" in notes
    assert "any clans may be the smaller ones (R1 b)" in notes


def test_r1a_preview_of_20_players_leaves_the_shadowlands_out(judge: Client) -> None:
    response = preview(judge, player_count="20", shortfall="exclude_shadowlands")

    rows = lineup_rows(response)
    assert rows["shadowlands"] == ("—", "not in the game (R1 a)")
    assert rows["unicorn"] == ("2 Generals", "one fewer by default (R1 b)")
    assert [c for c, (_r, note) in rows.items() if note == ""] == [
        "crab",
        "crane",
        "dragon",
        "lion",
        "phoenix",
        "scorpion",
    ]
    assert "Not in the game: Shadowlands (R1 a)." in lineup_notes(response)


@pytest.mark.parametrize(("count", "says"), [("7", "7 players are too few"), ("50", "too many")])
def test_r1_preview_of_a_count_r1_cannot_seat_says_so(judge: Client, count: str, says: str) -> None:
    response = preview(judge, player_count=count)

    problem = lineup_problem(response)
    assert problem.startswith("R1 cannot seat this count: ")
    assert says in problem
    assert lineup_rows(response) == {}


def test_a_preview_keeps_the_form_as_typed_and_shows_no_problems(judge: Client) -> None:
    response = preview(judge, name="", player_count="20", clan_abilities=None, base_hand="6")

    page = response.content.decode()
    assert 'id="form-problems"' not in page
    assert checked(response, "clan_abilities") == []
    assert checked(response, "base_hand") == ["6"]
    assert 'value="20"' in page


def test_the_script_gets_the_words_of_the_table(judge: Client) -> None:
    page = judge.get(NEW).content.decode()
    config = json.loads(
        re.search(
            r'<script id="tournament-form-config" type="application/json">(.*?)</script>',
            page,
            re.S,
        ).group(1)  # type: ignore[union-attr]
    )

    assert config["api"] == "/api/lineup"
    assert config["roleCounts"]["general"]["3"] == "3 Generals"
    assert config["smallerText"]["4"].startswith("4 clans have one member fewer (%(roles)s)")
    assert [c["id"] for c in config["clans"]][:2] == ["crab", "crane"]


# --- The settings page, until the start ----------------------------------------------------


def test_the_settings_page_shows_the_tournaments_settings(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, lineup={}, phase="setup", turn_seconds=90, base_hand=6)
    client.force_login(game.judge)

    response = client.get(settings_url(game))

    assert response.status_code == 200
    page = response.content.decode()
    assert 'value="Test tournament"' in page
    assert 'name="turn_minutes" value="1.50"' in page
    assert checked(response, "base_hand") == ["6"]
    assert checked(response, "clan_abilities") == ["on"]
    assert 'name="map_file"' not in page
    assert "The map cannot be changed once the tournament is created" in page
    assert "Rokugan" in page


def test_the_settings_are_changed_during_set_up(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, lineup={}, phase="setup")
    client.force_login(game.judge)
    end = (timezone.now() + timedelta(days=2)).replace(second=0, microsecond=0)
    local = timezone.localtime(end, timezone=ZoneInfo("Asia/Tokyo"))

    response = client.post(
        settings_url(game),
        form(
            name="Renamed",
            player_count="24",
            three_variant="three_generals",
            ends_by="time",
            ends_at=local.strftime("%Y-%m-%dT%H:%M"),
            time_zone="Asia/Tokyo",
            map=None,
        ),
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("referees:judge", args=[game.id])
    t = game.refresh()
    assert (t.name, t.player_count, t.three_variant, t.time_zone) == (
        "Renamed",
        24,
        "three_generals",
        "Asia/Tokyo",
    )
    assert (t.ends_at, t.turns_total) == (end, None)
    entry = LogEntry.objects.get(tournament=t, action="tournament_updated")
    assert entry.data["changes"]["name"] == {"from": "Test tournament", "to": "Renamed"}


def test_the_settings_cannot_change_once_the_tournament_has_started(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="planning")
    client.force_login(game.judge)

    shown = client.get(settings_url(game))
    sent = client.post(settings_url(game), form(name="Too late"))

    assert shown.status_code == 409
    assert "The tournament has started" in shown.content.decode()
    assert sent.status_code == 409
    assert game.refresh().name == "Test tournament"


def test_a_change_that_would_orphan_registered_players_is_refused_with_the_reason(
    client: Client, make_game: Callable[..., Game]
) -> None:
    """R1: 24 registered with a Daimyo per clan do not fit 16 players."""
    game = make_game(24, phase="setup")
    client.force_login(game.judge)

    response = client.post(settings_url(game), form(player_count="16", map=None))

    assert response.status_code == 400
    problems = field_errors(response, "player_count")
    assert len(problems) == 1
    assert problems[0].startswith("the players already registered do not fit: ")
    assert "with 16 players R1 gives no clan a Daimyo" in problems[0]
    assert game.refresh().player_count == 24


def test_leaving_out_a_clan_whose_players_are_registered_is_refused(
    client: Client, make_game: Callable[..., Game]
) -> None:
    """R1 a: the Shadowlands cannot be left out once a Shadowlands player is registered."""
    game = make_game(20, lineup={"shadowlands": ["general"]}, phase="setup")
    client.force_login(game.judge)

    response = client.post(
        settings_url(game), form(player_count="20", shortfall="exclude_shadowlands", map=None)
    )

    assert response.status_code == 400
    assert field_errors(response, "shortfall") == [
        "players of the Shadowlands are registered, so the clan cannot be left out (R1 a)"
    ]
    assert game.refresh().campaign.excluded_clans == []


def test_the_settings_page_is_for_the_tournaments_judges(
    client: Client, make_game: Callable[..., Game], other_user: AbstractBaseUser
) -> None:
    game = make_game(16, lineup={}, phase="setup")

    anonymous = client.get(settings_url(game))
    client.force_login(other_user)
    stranger = client.post(settings_url(game), form(name="Taken over"))

    assert anonymous.status_code == 302
    assert stranger.status_code == 403
    assert game.refresh().name == "Test tournament"


# --- Links to these pages ------------------------------------------------------------------


def test_the_console_links_to_the_settings_during_set_up_only(
    client: Client, make_game: Callable[..., Game]
) -> None:
    setup = make_game(16, lineup={}, phase="setup", name="In set-up")
    started = make_game(16, phase="planning", name="Started")
    client.force_login(setup.judge)

    in_setup = client.get(reverse("referees:judge", args=[setup.id])).content.decode()
    after = client.get(reverse("referees:judge", args=[started.id])).content.decode()

    assert f'href="{settings_url(setup)}" id="settings-link"' in in_setup
    assert 'id="settings-link"' not in after


def test_the_judge_home_has_a_new_tournament_button(judge: Client) -> None:
    page = judge.get(reverse("referees:judge_home")).content.decode()

    assert f'href="{NEW}" id="new-tournament"' in page
