"""The big screen's gong at each deadline (issue 32): a judge switches it on or off.

The switch is a service (``tournament_gong_set``: one unit of work, logged, announced to
every watcher, the public included, since the screen reads it from the public state) and an
endpoint, ``POST /api/tournaments/{id}/screen/gong {"on": bool}``, for judges only. The
pages of issue 32 as the server draws them close the file (their scripts' stories are
tests/browser/test_alarms.py).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.translation import override

from referees import services
from referees.kernel.visibility import Viewer
from referees.live.events import NOT_PUBLIC_KINDS
from referees.models import LogEntry, Tournament
from referees.reading.log import tournament_log
from referees.reading.state import tournament_state
from referees.texts.log import log_context, log_kind, log_text
from tests.event_capture import IN_MEMORY_LAYERS, OnCommitCapture, effects_of
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def gong_path(game: Game) -> str:
    return f"/tournaments/{game.id}/screen/gong"


def public_state(game: Game) -> dict[str, Any]:
    return tournament_state(tournament=game.refresh(), viewer=Viewer.public(), now=timezone.now())


# --- The service ------------------------------------------------------------------------------


def test_the_gong_is_on_by_default_and_every_viewer_reads_it(game24: Game) -> None:
    daimyo = Viewer.of_player(game24.player("lion", "daimyo"))

    for viewer in (Viewer.public(), Viewer.judge(), daimyo):
        state = tournament_state(tournament=game24.refresh(), viewer=viewer, now=timezone.now())
        assert state["tournament"]["screen_gong"] is True


def test_a_judge_switches_the_gong_off_and_on_and_each_switch_is_logged(game16: Game) -> None:
    version = game16.refresh().campaign.version

    services.tournament_gong_set(
        tournament_id=game16.id, on=False, actor=game16.judge_actor, now=timezone.now()
    )

    assert game16.refresh().screen_gong is False
    assert public_state(game16)["tournament"]["screen_gong"] is False
    assert game16.refresh().campaign.version == version + 1
    services.tournament_gong_set(
        tournament_id=game16.id, on=True, actor=game16.judge_actor, now=timezone.now()
    )
    assert public_state(game16)["tournament"]["screen_gong"] is True
    entries = list(LogEntry.objects.filter(action="tournament_gong_set").order_by("pk"))
    assert [e.data["on"] for e in entries] == [False, True]
    assert {e.actor for e in entries} == {"judge judge"}
    assert {e.turn for e in entries} == {1}


def test_switching_to_what_is_already_so_changes_nothing(game16: Game) -> None:
    version = game16.refresh().campaign.version

    services.tournament_gong_set(
        tournament_id=game16.id, on=True, actor=game16.judge_actor, now=timezone.now()
    )

    assert game16.refresh().campaign.version == version
    assert not LogEntry.objects.filter(action="tournament_gong_set").exists()


def test_the_switch_reads_as_a_sentence_in_the_log_in_both_languages(game16: Game) -> None:
    services.tournament_gong_set(
        tournament_id=game16.id, on=False, actor=game16.judge_actor, now=timezone.now()
    )
    entry = LogEntry.objects.get(action="tournament_gong_set")
    row = {"action": entry.action, "by": entry.actor, "data": entry.data, "turn": entry.turn}
    context = log_context(game16.tournament)

    assert log_text(row, context) == "Judge judge switched the big screen's gong off."
    with override("ru"):
        russian = log_text(row, context)
    assert "гонг" in russian and "switched" not in russian
    assert log_kind("tournament_gong_set") == "setup"
    logged = tournament_log(tournament=game16.tournament)
    assert "tournament_gong_set" in {e["action"] for e in logged}


def test_the_switch_is_announced_to_every_watcher_the_public_included(
    game16: Game, settings: Any, django_capture_on_commit_callbacks: OnCommitCapture
) -> None:
    """The screen follows the switch at once: its group gets the event, with the state."""
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYERS
    actor = game16.judge_actor

    effects = effects_of(
        tournament_id=game16.id,
        operation=lambda: services.tournament_gong_set(
            tournament_id=game16.id, on=False, actor=actor, now=timezone.now()
        ),
        on_commit=django_capture_on_commit_callbacks,
    )

    assert "screen" not in NOT_PUBLIC_KINDS
    assert effects.version_bumps == 1, effects.describe()
    assert [m["kind"] for m in effects.delivered.main] == ["screen"]
    (public,) = effects.delivered.public
    assert public["kind"] == "screen"
    assert '"screen_gong":false' in public["state_json"]


# --- The API ----------------------------------------------------------------------------------


def test_a_judge_switches_the_gong_through_the_api(api: Api, game16: Game, judge_key: str) -> None:
    off = api.post(gong_path(game16), {"on": False}, token=judge_key)

    assert off.status_code == 200, off.content
    assert off.json()["ok"] is True
    assert Tournament.objects.get(pk=game16.id).screen_gong is False
    state = api.get(f"/tournaments/{game16.id}/state").json()
    assert state["tournament"]["screen_gong"] is False
    assert LogEntry.objects.filter(action="tournament_gong_set", data__on=False).count() == 1

    on = api.post(gong_path(game16), {"on": True}, token=judge_key)
    assert on.status_code == 200, on.content
    assert api.get(f"/tournaments/{game16.id}/state").json()["tournament"]["screen_gong"] is True


def test_only_a_judge_switches_the_gong(api: Api, game16: Game) -> None:
    general = game16.token(game16.player("crab"))

    as_player = api.post(gong_path(game16), {"on": False}, token=general)
    as_nobody = api.post(gong_path(game16), {"on": False})

    assert as_player.status_code == 403
    assert as_nobody.status_code == 401
    assert Tournament.objects.get(pk=game16.id).screen_gong is True
    assert not LogEntry.objects.filter(action="tournament_gong_set").exists()


@pytest.mark.parametrize(
    "body", [{}, {"on": "off"}, {"on": 0}, {"on": None}, {"switch": True}], ids=repr
)
def test_a_bad_switch_is_refused_naming_the_field(
    api: Api, game16: Game, judge_key: str, body: dict[str, Any]
) -> None:
    answer = api.post(gong_path(game16), body, token=judge_key)

    assert answer.status_code in (400, 422), answer.content
    assert "on" in answer.json()["detail"]
    assert Tournament.objects.get(pk=game16.id).screen_gong is True


def test_the_gong_of_a_tournament_that_does_not_exist_is_404(api: Api, judge_key: str) -> None:
    answer = api.post("/tournaments/999999/screen/gong", {"on": False}, token=judge_key)

    assert answer.status_code == 404


# --- The pages ----------------------------------------------------------------------------------


def test_the_console_shows_the_switch_as_the_tournament_has_it(
    client: Client, game16: Game
) -> None:
    client.force_login(game16.judge)
    console = f"/referees/tournaments/{game16.id}/judge/"

    on = client.get(console).content.decode()
    services.tournament_gong_set(
        tournament_id=game16.id, on=False, actor=game16.judge_actor, now=timezone.now()
    )
    off = client.get(console).content.decode()

    assert re.search(r'<input type="checkbox" id="screen-gong" checked>', on)
    assert '<input type="checkbox" id="screen-gong">' in off
    assert "Gong on the big screen" in on


def test_the_big_screen_has_its_deadline_parts_in_the_viewers_language(
    client: Client, game16: Game
) -> None:
    screen = f"/referees/tournaments/{game16.id}/screen/"

    english = client.get(screen).content.decode()
    russian = client.get(screen, headers={"Accept-Language": "ru"}).content.decode()

    for text in ("Orders closed", "Next deadline", "Sound on"):
        assert text in english
    for text in ("Приказы закрыты", "Следующий срок", "Включить звук"):
        assert text in russian


def join(client: Client, game: Game, clan: str, role: str) -> None:
    assert client.get(f"/join/{game.token(game.player(clan, role))}").status_code == 302


def test_a_daimyo_gets_the_list_of_generals_without_an_order_and_a_karo_does_not(
    client: Client, game_karo: Game
) -> None:
    """R1.1: a Daimyo reads his clan's orders, a Karo none, so only the Daimyo is told who
    has not ordered yet (his clan only: the table lists no other clan's Generals)."""
    clan_page = f"/referees/tournaments/{game_karo.id}/clan/"
    join(client, game_karo, "crab", "daimyo")
    daimyo = client.get(clan_page).content.decode()
    karo_client = Client()
    join(karo_client, game_karo, "crab", "karo")
    karo = karo_client.get(clan_page).content.decode()

    assert 'id="clan-unordered"' in daimyo
    assert 'id="clan-unordered"' not in karo
    rows = re.findall(r'<tr data-army="([^"]*)"', daimyo)
    assert rows and all(code.startswith("crab-") for code in rows)
    karo_state = tournament_state(
        tournament=game_karo.refresh(),
        viewer=Viewer.of_player(game_karo.player("crab", "karo")),
        now=timezone.now(),
    )
    assert karo_state["orders"] == []


def test_a_generals_page_has_the_alarm_and_its_sound_switch(client: Client, game16: Game) -> None:
    join(client, game16, "crab", "general")

    page = client.get(f"/referees/tournaments/{game16.id}/general/").content.decode()

    assert 'id="clock-alarm"' in page
    assert 'id="alarm-sounds"' in page
    assert 'data-alarm-60="1 minute left: no order yet"' in page
    assert 'data-alarm-10="10 seconds!"' in page
