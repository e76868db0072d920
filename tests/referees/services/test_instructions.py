"""A Daimyo's written instructions to his Generals (R1.1).

Only where his clan has no Karo; where it has one, messages go by word of mouth through the
Karo and nothing is written. Judges read all; a Daimyo his clan's; a General those to him or
to all the clan's Generals; nobody else (a Karo, other clans, the public).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import Instruction, LogEntry, Player
from referees.reading.messages import visible_instructions
from referees.reading.state import tournament_state
from referees.services import TournamentError
from sl5r.api_errors import error_status
from sl5r.asgi import application
from strategic_map.models import Campaign
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

SECRET = "Hold Beiden Pass at all costs, then strike north at dawn"
KARO_REASON = (
    "your clan has a Karo: the Daimyo sends no written instructions, only spoken messages "
    "that the Karo carries to the Generals (R1.1)"
)


def send(game: Game, clan: str = "crane", *, text: str = SECRET, to: Player | None = None) -> Any:
    return services.instruction_send(
        player=game.player(clan, "daimyo"),
        text=text,
        recipient_id=to.pk if to is not None else None,
        now=timezone.now(),
    )


def refused(call: Callable[[], Any]) -> TournamentError:
    with pytest.raises(TournamentError) as caught:
        call()
    return caught.value


def texts(rows: list[dict[str, Any]]) -> list[str]:
    return [row["text"] for row in rows]


def state_of(game: Game, viewer: Viewer) -> dict[str, Any]:
    return tournament_state(tournament=game.refresh(), viewer=viewer, now=timezone.now())


def url(game: Game) -> str:
    return f"/tournaments/{game.id}/instructions"


# --- The service ------------------------------------------------------------------------------


def test_a_daimyo_writes_to_all_his_generals_logged_and_announced(game24: Game) -> None:
    version = game24.refresh().campaign.version

    instruction = send(game24)

    assert instruction.clan == "crane"
    assert instruction.author == game24.player("crane", "daimyo")
    assert instruction.recipient is None
    assert instruction.text == SECRET
    assert instruction.turn == 1
    entry = LogEntry.objects.get(action="instruction_sent")
    assert entry.actor == "daimyo Crane daimyo 3 (crane)"
    assert entry.turn == 1
    assert entry.data == {
        "instruction": instruction.pk,
        "clan": "crane",
        "to": None,
        "text": SECRET,
    }
    assert Campaign.objects.get(pk=game24.tournament.campaign_id).version == version + 1


def test_the_text_is_trimmed_and_2000_characters_are_allowed(game24: Game) -> None:
    assert send(game24, text="  go north \n").text == "go north"
    assert len(send(game24, text="x" * 2000).text) == 2000


def test_only_a_daimyo_writes(game_karo: Game) -> None:
    for player in (game_karo.player("crane"), game_karo.player("crab", "karo")):
        error = refused(
            lambda p=player: services.instruction_send(
                player=p, text=SECRET, recipient_id=None, now=timezone.now()
            )
        )
        assert (error_status(error), error.code) == (403, "forbidden")
        assert error.message == "only a Daimyo sends written instructions"
    assert not Instruction.objects.exists()


def test_a_daimyo_whose_clan_has_a_karo_writes_nothing(game_karo: Game) -> None:
    """R1.1: with a Karo, the Daimyo's messages are spoken, carried by the Karo."""
    error = refused(lambda: send(game_karo, "crab"))

    assert (error_status(error), error.code) == (403, "karo")
    assert error.message == KARO_REASON
    assert not Instruction.objects.exists()
    assert not LogEntry.objects.filter(action="instruction_sent").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "text: write the instruction"),
        ("   \n ", "text: write the instruction"),
        ("x" * 2001, "text: at most 2000 characters"),
    ],
)
def test_an_empty_or_too_long_text_is_refused(game24: Game, text: str, message: str) -> None:
    error = refused(lambda: send(game24, text=text))

    assert (error_status(error), error.message) == (400, message)
    assert not Instruction.objects.exists()


def test_the_recipient_is_a_general_of_the_daimyos_clan(
    game24: Game, make_game: Callable[..., Game]
) -> None:
    other = make_game(16, name="Other")
    unknown = refused(lambda: send(game24, to=other.player("crane")))
    assert (error_status(unknown), unknown.code) == (404, "not_found")
    assert (
        unknown.message == f"to: there is no player {other.player('crane').pk} in this tournament"
    )

    for wrong in (game24.player("lion"), game24.player("crane", "daimyo")):
        error = refused(lambda w=wrong: send(game24, to=w))
        assert (error_status(error), error.code) == (422, "not_a_general")
        assert error.message == "to: write to one of your clan's Generals, or to all of them"
    assert not Instruction.objects.exists()


@pytest.mark.parametrize("phase", ["setup", "finished"])
def test_no_instructions_before_the_start_or_after_the_end(
    make_game: Callable[..., Game], phase: str
) -> None:
    game = make_game(24, phase="setup" if phase == "setup" else "running")
    if phase == "finished":
        services.clock_end(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())

    error = refused(lambda: send(game))

    assert (error_status(error), error.code) == (409, "phase")
    assert not Instruction.objects.exists()


def test_an_instruction_during_the_start_has_no_turn(make_game: Callable[..., Game]) -> None:
    game = make_game(24, phase="negotiation")

    assert send(game).turn is None


# --- Who reads them -------------------------------------------------------------------------------


def test_who_reads_which_instruction(game24: Game) -> None:
    first, second = game24.player("crane", n=1), game24.player("crane", n=2)
    send(game24, text="to all")
    send(game24, text="to the first", to=first)
    send(game24, "lion", text="lion orders")

    def read(viewer: Viewer) -> list[str]:
        return texts(visible_instructions(tournament=game24.tournament, viewer=viewer))

    assert read(Viewer.judge()) == ["lion orders", "to the first", "to all"]
    assert read(Viewer.of_player(game24.player("crane", "daimyo"))) == ["to the first", "to all"]
    assert read(Viewer.of_player(first)) == ["to the first", "to all"]
    assert read(Viewer.of_player(second)) == ["to all"]
    assert read(Viewer.of_player(game24.player("lion"))) == ["lion orders"]
    assert read(Viewer.of_player(game24.player("crab"))) == []
    assert read(Viewer.public()) == []


def test_a_karo_reads_none(game_karo: Game) -> None:
    send(game_karo, "crane")

    karo = Viewer.of_player(game_karo.player("crab", "karo"))

    assert visible_instructions(tournament=game_karo.tournament, viewer=karo) == []
    assert state_of(game_karo, karo)["instructions"] == []


def test_the_state_of_a_general_and_of_the_daimyo_holds_them_newest_first(game24: Game) -> None:
    general = game24.player("crane", n=2)
    for n in range(22):
        send(game24, text=f"instruction {n}", to=general if n % 2 else None)

    for player in (general, game24.player("crane", "daimyo")):
        rows = state_of(game24, Viewer.of_player(player))["instructions"]
        assert texts(rows) == [f"instruction {n}" for n in range(21, 1, -1)]
    latest, previous = state_of(game24, Viewer.of_player(general))["instructions"][:2]
    assert latest["author"] == "Crane daimyo 3"
    assert latest["to"] == general.name and latest["to_id"] == general.pk
    assert previous["to"] == "all" and previous["to_id"] is None
    assert latest["turn"] == 1
    assert set(latest) == {"id", "clan", "author", "author_id", "to", "to_id", "text", "at", "turn"}


def test_the_text_reaches_no_other_clan_nor_the_public_through_the_state(game24: Game) -> None:
    send(game24)

    for viewer in (Viewer.of_player(game24.player("lion")), Viewer.public()):
        state = state_of(game24, viewer)
        assert SECRET not in json.dumps(state)
    assert "instructions" not in state_of(game24, Viewer.public())


# --- The API -------------------------------------------------------------------------------------


def test_a_daimyo_sends_through_the_api_and_his_general_reads_it(api: Api, game24: Game) -> None:
    general = game24.player("crane")
    daimyo_token = game24.token(game24.player("crane", "daimyo"))

    response = api.post(url(game24), {"text": SECRET, "to": general.pk}, token=daimyo_token)

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["text"] == SECRET
    assert (body["to"], body["to_id"], body["author"]) == (
        general.name,
        general.pk,
        "Crane daimyo 3",
    )
    assert body["turn"] == 1
    read = api.get(url(game24), token=game24.token(general)).json()
    assert texts(read) == [SECRET]
    state = api.get(f"/tournaments/{game24.id}/state", token=game24.token(general)).json()
    assert texts(state["instructions"]) == [SECRET]


def test_to_null_writes_to_all_the_generals(api: Api, game24: Game) -> None:
    token = game24.token(game24.player("crane", "daimyo"))

    response = api.post(url(game24), {"text": SECRET, "to": None}, token=token)

    assert response.status_code == 201
    assert response.json()["to"] == "all"
    for n in (1, 2):
        read = api.get(url(game24), token=game24.token(game24.player("crane", n=n))).json()
        assert texts(read) == [SECRET]


# R1 has no game with a Karo and a clan without a Daimyo: each reader is asked in the game
# that has him (a Lion General sees every army in the first, a Crab Karo is in the second).
@pytest.mark.parametrize(
    ("game_name", "readers"),
    [
        ("game_mixed", [("lion", "general"), ("crab", "general"), ("crab", "daimyo")]),
        (
            "game_karo",
            [("lion", "general"), ("crab", "general"), ("crab", "karo"), ("crab", "daimyo")],
        ),
    ],
    ids=["lion-without-daimyo", "crab-with-karo"],
)
def test_the_api_gives_the_text_to_nobody_else(
    api: Api,
    judge_key: str,
    request: pytest.FixtureRequest,
    game_name: str,
    readers: list[tuple[str, str]],
) -> None:
    game: Game = request.getfixturevalue(game_name)
    api.post(url(game), {"text": SECRET}, token=game.token(game.player("crane", "daimyo")))

    assert texts(api.get(url(game), token=judge_key).json()) == [SECRET]
    for clan, role in readers:
        player = game.player(clan, role)
        token = game.token(player)
        assert api.get(url(game), token=token).json() == [], player
        state = api.get(f"/tournaments/{game.id}/state", token=token).content.decode()
        assert SECRET not in state, player
    assert api.get(url(game)).json() == []
    assert SECRET not in api.get(f"/tournaments/{game.id}/state").content.decode()


@pytest.mark.parametrize(
    ("who", "status", "detail"),
    [
        ("general", 403, "only a Daimyo sends written instructions"),
        ("karo", 403, "only a Daimyo sends written instructions"),
        ("karo_daimyo", 403, KARO_REASON),
        ("judge", 403, "only a player of this tournament may do this"),
        ("nobody", 401, None),
    ],
)
def test_who_may_not_send(
    api: Api, game_karo: Game, judge_key: str, who: str, status: int, detail: str | None
) -> None:
    token = {
        "general": game_karo.token(game_karo.player("crane")),
        "karo": game_karo.token(game_karo.player("crab", "karo")),
        "karo_daimyo": game_karo.token(game_karo.player("crab", "daimyo")),
        "judge": judge_key,
        "nobody": None,
    }[who]

    response = api.post(url(game_karo), {"text": SECRET}, token=token)

    assert response.status_code == status, response.content
    if detail is not None:
        assert response.json()["detail"].startswith(detail)
    assert not Instruction.objects.exists()


@pytest.mark.parametrize(
    ("payload", "status", "detail"),
    [
        ({"text": ""}, 400, "text: write the instruction"),
        ({"text": "x" * 2001}, 400, "text: at most 2000 characters"),
        ({"text": SECRET, "to": 999_999}, 404, "to: there is no player 999999 in this tournament"),
        ({}, 422, "text: Field required"),
    ],
)
def test_bad_input_is_refused_with_a_message_and_nothing_is_stored(
    api: Api, game24: Game, payload: dict[str, Any], status: int, detail: str
) -> None:
    token = game24.token(game24.player("crane", "daimyo"))

    response = api.post(url(game24), payload, token=token)

    assert response.status_code == status, response.content
    assert response.json()["detail"] == detail
    assert not Instruction.objects.exists()


def test_writing_to_another_clans_general_is_refused(api: Api, game24: Game) -> None:
    token = game24.token(game24.player("crane", "daimyo"))

    response = api.post(url(game24), {"text": SECRET, "to": game24.player("lion").pk}, token=token)

    assert response.status_code == 422
    assert response.json()["code"] == "not_a_general"
    assert not Instruction.objects.exists()


def test_a_refusal_comes_in_russian(api: Api, game_karo: Game) -> None:
    token = game_karo.token(game_karo.player("crab", "daimyo"))

    response = api.post(
        url(game_karo), {"text": SECRET}, token=token, headers={"Accept-Language": "ru"}
    )

    assert response.status_code == 403
    assert response.json()["code"] == "karo"
    assert "Каро" in response.json()["detail"]
    assert "(R1.1)" in response.json()["detail"]


# --- The live event -------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_other_clans_are_sent_nothing_for_an_instruction_and_their_pong_vouches(
    game24: Game, settings: Any
) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    token = await database_sync_to_async(game24.token)(
        await database_sync_to_async(game24.player)("lion")
    )
    comm = WebsocketCommunicator(
        application,
        f"/ws/tournaments/{game24.id}/?token={token}",
        headers=[(b"host", b"localhost"), (b"origin", b"http://localhost")],
    )
    connected, _ = await comm.connect(timeout=5)
    assert connected
    hello = await comm.receive_json_from(timeout=5)
    assert hello["type"] == "hello"

    await database_sync_to_async(send)(game24)

    # Another clan's instruction: his view is unchanged, so he is sent nothing for it
    # (issue 42); his pong vouches for the view he holds up to the new version. Frames on
    # a socket keep their order: the first after a ping is its pong, never the event.
    version = hello["version"] + 1
    for _ in range(50):
        await comm.send_json_to({"type": "ping"})
        message = await comm.receive_output(timeout=5)
        assert message["type"] == "websocket.send"
        assert "Beiden" not in message["text"]
        pong = json.loads(message["text"])
        assert pong["type"] == "pong", pong
        if pong["version"] == version:
            break
    assert pong == {"type": "pong", "version": version, "since": hello["version"]}
    await comm.disconnect()


# --- The pages ------------------------------------------------------------------------------------


def join(client: Client, game: Game, player: Player) -> None:
    assert client.get(f"/join/{game.token(player)}").status_code == 302


def clan_page(client: Client, game: Game, player: Player) -> str:
    join(client, game, player)
    response = client.get(f"/referees/tournaments/{game.id}/clan/")
    assert response.status_code == 200
    return response.content.decode()


def general_page(client: Client, game: Game, player: Player) -> str:
    join(client, game, player)
    response = client.get(f"/referees/tournaments/{game.id}/general/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_daimyo_without_a_karo_gets_the_form_and_his_sent_instructions(
    client: Client, game24: Game
) -> None:
    first = game24.player("crane")
    send(game24, to=first)

    page = clan_page(client, game24, game24.player("crane", "daimyo"))

    assert 'id="instruction-form"' in page
    assert '<option value="">all Generals of the clan</option>' in page
    for general in Player.objects.filter(
        tournament=game24.tournament, clan="crane", role="general"
    ):
        assert f'<option value="{general.pk}">{general.name}</option>' in page
    assert 'maxlength="2000"' in page
    assert "Send instruction" in page
    assert 'id="instructions-list"' in page
    assert SECRET in page
    assert f"to {first.name}" in page
    assert "turn 1" in page


def test_the_daimyo_with_a_karo_gets_no_form(client: Client, game_karo: Game) -> None:
    page = clan_page(client, game_karo, game_karo.player("crab", "daimyo"))

    assert 'id="instruction-form"' not in page
    assert 'id="instructions-list"' not in page
    assert "only spoken messages that the Karo carries" in page


def test_the_karo_gets_no_form(client: Client, game_karo: Game) -> None:
    page = clan_page(client, game_karo, game_karo.player("crab", "karo"))

    assert 'id="instruction-form"' not in page
    assert 'id="instructions-list"' not in page


def test_the_generals_page_shows_his_daimyos_instructions(client: Client, game24: Game) -> None:
    general = game24.player("crane", n=2)
    send(game24, text="first, to all")
    send(game24, text="second, to him", to=general)
    send(game24, text="to the other one", to=game24.player("crane", n=1))

    page = general_page(client, game24, general)

    assert "Instructions from your Daimyo" in page
    assert page.index("second, to him") < page.index("first, to all")  # newest first
    assert "to all Generals" in page
    assert "to the other one" not in page
    assert 'data-instruction-to-all="to all Generals"' in page  # for general.js


def test_a_general_of_another_clan_sees_nothing_of_it(client: Client, game24: Game) -> None:
    send(game24)

    page = general_page(client, game24, game24.player("lion"))

    assert SECRET not in page
    assert "No instructions yet." in page


def test_a_general_whose_clan_has_a_karo_is_told_why_there_are_none(
    client: Client, game_karo: Game
) -> None:
    page = general_page(client, game_karo, game_karo.player("crab"))

    assert "come by word of mouth through the Karo" in page
    assert 'id="instructions-list"' not in page


def test_a_general_without_a_daimyo_has_no_instructions_panel(client: Client, game16: Game) -> None:
    page = general_page(client, game16, game16.player("crane"))

    assert "Instructions from your Daimyo" not in page


def test_the_generals_instructions_in_russian(client: Client, game24: Game) -> None:
    send(game24)
    client.cookies["django_language"] = "ru"

    page = general_page(client, game24, game24.player("crane"))

    assert "Instructions from your Daimyo" not in page
    assert "Указания вашего Даймё" in page
    assert "всем Генералам" in page
    assert "ход 1" in page
    assert SECRET in page
