"""Check-in before the start (issue 32): the join link checks a player in, a judge marks a
paper player present, a no-show's seat goes to a stand-in, or the line-up shrinks without
him where R1 (b) allows it (a Karo first, then a Daimyo, steps into his place)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import LogEntry, Player
from referees.reading.state import tournament_state
from referees.services import TournamentError, checkin
from sl5r.api_errors import error_status
from tests.referees.conftest import KARO_LINEUP, KARO_PLAYERS, Api, Game

pytestmark = pytest.mark.django_db


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


@pytest.fixture
def setup36(make_game: Callable[..., Game]) -> Game:
    """36 players in set-up: four clans with a Karo (Crab, Dragon, Phoenix, Shadowlands)."""
    return make_game(KARO_PLAYERS, lineup=KARO_LINEUP, phase="setup")


def test_opening_the_join_link_checks_the_player_in_once(client: Client, game16: Game) -> None:
    player = game16.player("crab")
    token = game16.token(player)

    client.get(f"/join/{token}")
    first = Player.objects.get(pk=player.pk).checked_in_at
    client.get(f"/join/{token}")

    assert first is not None
    assert Player.objects.get(pk=player.pk).checked_in_at == first
    assert LogEntry.objects.filter(action="player_checked_in").count() == 1


def test_the_judges_state_lists_who_has_not_come_first(client: Client, setup36: Game) -> None:
    here = setup36.player("lion")
    client.get(f"/join/{setup36.token(here)}")

    state = tournament_state(
        tournament=setup36.refresh(), viewer=Viewer.judge(), now=timezone.now()
    )

    rows = state["checkin"]
    assert len(rows) == KARO_PLAYERS
    assert rows[-1]["id"] == here.pk and rows[-1]["checked_in_at"]
    assert all(r["checked_in_at"] is None for r in rows[:-1])
    public = tournament_state(
        tournament=setup36.tournament, viewer=Viewer.public(), now=timezone.now()
    )
    assert "checkin" not in public


def test_a_judge_marks_a_paper_player_present_and_takes_it_back(setup36: Game) -> None:
    player = setup36.player("crane")
    now = timezone.now()

    marked = checkin.player_presence_set(
        tournament_id=setup36.id,
        player_id=player.pk,
        present=True,
        actor=setup36.judge_actor,
        now=now,
    )
    assert (marked.checked_in_at, marked.checked_in_by) == (now, setup36.judge_actor.label)
    assert checkin.checkin_row(marked)["marked_by"] == "judge"

    cleared = checkin.player_presence_set(
        tournament_id=setup36.id,
        player_id=player.pk,
        present=False,
        actor=setup36.judge_actor,
        now=now,
    )
    assert cleared.checked_in_at is None
    actions = LogEntry.objects.filter(action__startswith="player_").values_list("action", flat=True)
    assert list(actions)[-2:] == ["player_marked_present", "player_presence_cleared"]


def test_a_player_who_opened_his_link_is_not_unmarked(client: Client, setup36: Game) -> None:
    player = setup36.player("crane")
    client.get(f"/join/{setup36.token(player)}")

    error = refused(
        lambda: checkin.player_presence_set(
            tournament_id=setup36.id,
            player_id=player.pk,
            present=False,
            actor=setup36.judge_actor,
            now=timezone.now(),
        )
    )
    assert (error_status(error), error.code) == (409, "status")


def test_a_stand_in_takes_the_seat_with_a_new_link(client: Client, setup36: Game) -> None:
    player = setup36.player("crab")
    old_token = setup36.token(player)

    stood = checkin.player_stand_in(
        tournament_id=setup36.id,
        player_id=player.pk,
        name="Kuni Yori",
        actor=setup36.judge_actor,
        now=timezone.now(),
    )

    assert (stood.name, stood.clan, stood.role, stood.army_id) == (
        "Kuni Yori",
        "crab",
        "general",
        player.army_id,
    )
    assert setup36.token(stood) != old_token
    assert client.get(f"/join/{old_token}").status_code == 403
    assert LogEntry.objects.filter(action="player_stood_in").exists()


def test_the_shrink_preview_shows_the_karo_stepping_into_the_generals_army(setup36: Game) -> None:
    missing = setup36.player("crab", "general", 2)
    karo = setup36.player("crab", "karo")
    army = missing.army.code if missing.army else None

    preview = checkin.lineup_shrink_preview(
        tournament=setup36.refresh(), player_ids=[missing.pk]
    ).as_dict()

    assert preview["ok"], preview["problem"]
    assert (preview["players_before"], preview["players_after"]) == (36, 35)
    assert [p["id"] for p in preview["leaving"]] == [missing.pk]
    assert [(c["id"], c["role_before"], c["role"], c["army"]) for c in preview["changes"]] == [
        (karo.pk, "karo", "general", army)
    ]
    # Nothing changed yet.
    assert Player.objects.filter(pk=missing.pk).exists()
    assert setup36.refresh().player_count == 36


def test_the_shrink_applied_keeps_the_army_and_lowers_the_count(setup36: Game) -> None:
    missing = setup36.player("crab", "general", 2)
    karo = setup36.player("crab", "karo")

    checkin.lineup_shrink_apply(
        tournament_id=setup36.id,
        player_ids=[missing.pk],
        actor=setup36.judge_actor,
        now=timezone.now(),
    )

    tournament = setup36.refresh()
    assert tournament.player_count == 35
    promoted = Player.objects.get(pk=karo.pk)
    assert (promoted.role, promoted.army_id) == ("general", missing.army_id)
    assert not Player.objects.filter(pk=missing.pk).exists()
    entry = LogEntry.objects.get(action="lineup_shrunk")
    assert entry.data["players_after"] == 35
    # R1 holds for the line-up as it now is: the tournament can start.
    services.tournament_start(
        tournament_id=tournament.pk, actor=setup36.judge_actor, now=timezone.now()
    )
    assert setup36.refresh().phase == "planning"


def test_a_shrink_r1_b_does_not_allow_is_refused_with_its_reason(setup36: Game) -> None:
    """Two missing from one clan: it would be two members fewer (R1 b allows one)."""
    ids = [setup36.player("lion", "general", 1).pk, setup36.player("lion", "general", 2).pk]

    preview = checkin.lineup_shrink_preview(tournament=setup36.refresh(), player_ids=ids)
    error = refused(
        lambda: checkin.lineup_shrink_apply(
            tournament_id=setup36.id, player_ids=ids, actor=setup36.judge_actor, now=timezone.now()
        )
    )

    assert not preview.as_dict()["ok"]
    assert "Lion" in preview.problem
    assert (error_status(error), error.code) == (400, "lineup")
    assert setup36.refresh().player_count == KARO_PLAYERS


def test_shrinking_after_the_start_is_refused(game16: Game) -> None:
    error = refused(
        lambda: checkin.lineup_shrink_preview(
            tournament=game16.refresh(), player_ids=[game16.player("crab").pk]
        )
    )
    assert (error_status(error), error.code) == (409, "phase")


def test_the_check_in_api_for_judges_only(api: Api, setup36: Game, judge_key: str) -> None:
    player = setup36.player("crab", "general", 2)
    token = setup36.token(setup36.player("crane"))

    listed = api.get(f"/tournaments/{setup36.id}/checkin", token=judge_key)
    assert listed.status_code == 200 and len(listed.json()) == KARO_PLAYERS
    assert api.get(f"/tournaments/{setup36.id}/checkin", token=token).status_code == 403

    marked = api.post(
        f"/tournaments/{setup36.id}/players/{player.pk}/presence",
        {"present": True},
        token=judge_key,
    )
    assert marked.json()["checked_in_at"] is not None

    preview = api.post(
        f"/tournaments/{setup36.id}/lineup/shrink-preview",
        {"players": [player.pk]},
        token=judge_key,
    )
    assert preview.json()["ok"] is True
    stand_in = api.post(
        f"/tournaments/{setup36.id}/players/{player.pk}/stand-in",
        {"name": "Hida O-Ushi"},
        token=judge_key,
    )
    assert stand_in.json()["name"] == "Hida O-Ushi"
    assert "/join/" in stand_in.json()["join_url"]
    bad = api.post(
        f"/tournaments/{setup36.id}/lineup/shrink", {"players": [999999]}, token=judge_key
    )
    assert (bad.status_code, bad.json()["code"]) == (404, "not_found")
