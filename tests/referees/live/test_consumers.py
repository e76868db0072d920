"""The live-update websocket ``ws/tournaments/<id>/`` (architecture, boundaries 4 and 5).

Every watcher gets the same notification after a change commits: the version, the kind of
change and a turn number or phase, never an army, clan or province. The public alone also
gets ``state``, the public state (``tournament_state`` for ``Viewer.public()``). The connections go
through the whole ASGI application (origin check, cookies, session, auth, routing).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import F
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_create
from referees.kernel.visibility import Viewer
from referees.live import consumers, hubs
from referees.live.consumers import (
    CLOSE_BAD_MESSAGE,
    CLOSE_BAD_TOKEN,
    CLOSE_NO_TOURNAMENT,
    CLOSE_OTHER_TOURNAMENT,
    CLOSE_TOO_BIG,
    CLOSE_UNSUPPORTED_DATA,
)
from referees.live.events import event_payload, tournament_group, tournament_public_group
from referees.models import Tournament
from referees.reading.state import tournament_state
from referees.services import OrderInput
from sl5r.asgi import application
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Army, Campaign
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://localhost"
EVENT_KEYS = {"type", "version", "kind", "turn", "phase"}
TIMEOUT = 5


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> Iterator[None]:
    """The embedded default, whatever REDIS_URL the environment sets."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    yield


def session_cookie(*, judge: Any = None, join_token: str | None = None) -> str:
    """A ``Cookie`` header of a browser signed in as the judge, or joined as a player."""
    client = Client()
    if judge is not None:
        client.force_login(judge)
    if join_token is not None:
        response = client.get(f"/join/{join_token}")
        assert response.status_code in (200, 302), response.status_code
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def communicator(
    tournament_id: int,
    *,
    token: str | None = None,
    cookie: str | None = None,
    origin: str | None = ORIGIN,
) -> WebsocketCommunicator:
    path = f"/ws/tournaments/{tournament_id}/"
    if token is not None:
        path += f"?token={token}"
    headers = [(b"host", b"localhost")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if cookie is not None:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def connected(comm: WebsocketCommunicator) -> dict[str, Any]:
    """Connect and return the ``hello``."""
    ok, _ = await comm.connect(timeout=TIMEOUT)
    assert ok, "the handshake was refused"
    hello: dict[str, Any] = await comm.receive_json_from(timeout=TIMEOUT)
    assert hello["type"] == "hello", hello
    return hello


async def closed_with(comm: WebsocketCommunicator) -> int:
    """Connect, expect the server to close at once, and return its close code."""
    ok, _ = await comm.connect(timeout=TIMEOUT)
    assert ok, "refusals are sent as close codes after the handshake"
    message = await comm.receive_output(timeout=TIMEOUT)
    assert message["type"] == "websocket.close", message
    code: int = message["code"]
    await comm.disconnect()
    return code


async def next_event_text(comm: WebsocketCommunicator) -> str:
    """The raw JSON text of the next message, as the browser receives it."""
    message = await comm.receive_output(timeout=TIMEOUT)
    assert message["type"] == "websocket.send", message
    text: str = message["text"]
    return text


def version_of(game: Game) -> int:
    return Campaign.objects.get(pk=game.tournament.campaign_id).version


def resolve_now(game: Game) -> None:
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


def hold(game: Game, clan: str = "crab") -> None:
    services.order_give(player=game.player(clan), order=OrderInput(kind="hold"), now=timezone.now())


def secrets_of(game: Game) -> set[str]:
    """Every army code, clan and province name: none may appear in an event."""
    codes = set(
        Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    )
    return codes | set(CLANS) | set(rokugan_map().provinces)


# --- Who receives what ---------------------------------------------------------------------


async def test_judge_player_and_public_all_get_the_turn_resolved_event(game16: Game) -> None:
    """After a turn resolves, the judge (session), a General (?token=) and the public
    receive the same event, with the campaign's new version and the resolved turn, each
    with his own view of the new turn (issue 33: no page needs to fetch it)."""
    # given
    cookie = await database_sync_to_async(session_cookie)(judge=game16.judge)
    general = game16.players[0]
    token = await database_sync_to_async(game16.token)(general)
    judge = communicator(game16.id, cookie=cookie)
    player = communicator(game16.id, token=token)
    public = communicator(game16.id)
    hellos = [await connected(c) for c in (judge, player, public)]

    # when
    await database_sync_to_async(resolve_now)(game16)

    # then
    version = await database_sync_to_async(version_of)(game16)
    kinds = ("judge", "player", "public")
    for comm, hello, kind in zip((judge, player, public), hellos, kinds, strict=True):
        event = await comm.receive_json_from(timeout=TIMEOUT)
        state = event.pop("state")
        assert state["tournament"]["turn"] == 2
        assert state["viewer"]["kind"] == kind
        assert event == {
            "type": "event",
            "version": version,
            "kind": "turn_resolved",
            "turn": 1,
            "phase": "running",
        }
        assert event["version"] > hello["version"]
        if kind == "player":
            assert state["viewer"]["player"]["id"] == general.pk
        await comm.disconnect()


async def test_player_joined_by_session_and_judge_by_api_key_get_order_events(
    game16: Game,
) -> None:
    """A device that opened its join link (session) and a judge's ``?token=`` API key are
    let in like the API lets them in; the judge hears about a stored order with his view,
    which lists it; a General of another clan is sent nothing for it (issue 42), and his
    pong vouches that the view he holds stands at the new version."""
    # given
    general = await database_sync_to_async(game16.player)("crane")
    join_token = await database_sync_to_async(game16.token)(general)
    cookie = await database_sync_to_async(session_cookie)(join_token=join_token)
    key = await database_sync_to_async(judge_key_create)(user=game16.judge, label="ws")
    player = communicator(game16.id, cookie=cookie)
    judge = communicator(game16.id, token=key.key)
    hello = await connected(player)
    await connected(judge)

    # when
    await database_sync_to_async(hold)(game16, "crab")

    # then
    version = await database_sync_to_async(version_of)(game16)
    event = await judge.receive_json_from(timeout=TIMEOUT)
    assert event["kind"] == "order"
    assert [o["army"] for o in event["state"]["orders"]] == ["crab-1"]
    # Frames on a socket keep their order: the first one after a ping is its pong.
    pong = await pong_at(player, version)
    assert pong == {"type": "pong", "version": version, "since": hello["version"]}
    for comm in (player, judge):
        await comm.disconnect()


async def test_events_tell_a_general_under_a_daimyo_nothing_but_his_own_view(
    game24: Game,
) -> None:
    """R1.1: a Crane General (his clan has a Daimyo) gets events with only type, version,
    kind, turn and phase, and his own view (his army alone) or ``since``; no army code,
    clan or province appears outside his view, though the services that sent them named
    the army, its clan and a province, and no other army's code appears anywhere."""
    # given
    general = await database_sync_to_async(game24.player)("crane")
    token = await database_sync_to_async(game24.token)(general)
    comm = communicator(game24.id, token=token)
    await connected(comm)
    secrets = await database_sync_to_async(secrets_of)(game24)
    codes = await database_sync_to_async(army_codes)(game24)
    crab_army = (await database_sync_to_async(game24.player)("crab")).army.code

    # when: an order (army + clan), a correction (army), a control correction (province)
    await database_sync_to_async(hold)(game24, "crab")

    def corrections() -> None:
        province = game24.province_of(crab_army)
        services.army_correct(
            tournament_id=game24.id,
            army_code=crab_army,
            province=province,
            reason="test",
            actor=game24.judge_actor,
            now=timezone.now(),
        )
        services.control_correct(
            tournament_id=game24.id,
            province=province,
            clan="crab",
            reason="test",
            actor=game24.judge_actor,
            now=timezone.now(),
        )
        resolve_now(game24)

    await database_sync_to_async(corrections)()

    # then
    texts = [await next_event_text(comm) for _ in range(3)]
    kinds = [json.loads(t)["kind"] for t in texts]
    assert kinds == ["correction", "correction", "turn_resolved"]  # not the Crab's order
    own = general.army.code
    for text in texts:
        event = json.loads(text)
        assert set(event) <= EVENT_KEYS | {"state", "since"}, event
        state = event.pop("state", None)
        # Besides his own view (his army, what is next to it: R1.1), nothing at all.
        leaked = sorted(s for s in secrets if f'"{s}"' in json.dumps(event))
        assert not leaked, f"{leaked} in {text}"
        if state is not None:
            assert [a["id"] for a in state["armies"]] == [own]
            others = sorted(c for c in codes if c != own and f'"{c}"' in text)
            assert not others, f"{others} in {text}"
    await comm.disconnect()


def army_codes(game: Game) -> set[str]:
    return set(
        Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    )


def public_state_now(game: Game) -> dict[str, Any]:
    tournament = Tournament.objects.select_related("campaign").get(pk=game.id)
    return tournament_state(tournament=tournament, viewer=Viewer.public(), now=timezone.now())


def without_timing(state: dict[str, Any]) -> dict[str, Any]:
    """The state without what depends on the moment it was built (the clock's now)."""
    clock = {
        k: v
        for k, v in state["tournament"]["clock"].items()
        if k not in ("server_time", "remaining")
    }
    return {**state, "tournament": {**state["tournament"], "clock": clock}}


async def test_public_socket_gets_the_public_state_in_the_event(game16: Game) -> None:
    """The public need not fetch: the event brings the new turn's public state, the same
    as ``tournament_state`` for the public (but for the clock's moment)."""
    # given
    public = communicator(game16.id)
    await connected(public)

    # when
    await database_sync_to_async(resolve_now)(game16)

    # then
    event = await public.receive_json_from(timeout=TIMEOUT)
    expected = await database_sync_to_async(public_state_now)(game16)
    assert event["kind"] == "turn_resolved"
    state = event["state"]
    assert state["tournament"]["turn"] == 2 == expected["tournament"]["turn"]
    assert state["tournament"]["version"] == event["version"]
    assert state["viewer"]["kind"] == "public"
    assert state["tournament"]["clock"]["server_time"]
    assert without_timing(state) == without_timing(json.loads(json.dumps(expected)))
    await public.disconnect()


def viewer_state_now(game: Game, viewer: Viewer) -> dict[str, Any]:
    tournament = Tournament.objects.select_related("campaign").get(pk=game.id)
    state = tournament_state(tournament=tournament, viewer=viewer, now=timezone.now())
    return json.loads(json.dumps(state, cls=DjangoJSONEncoder))


async def test_each_socket_gets_the_state_its_viewer_may_see_and_no_more(
    game24: Game,
) -> None:
    """R1.1 on the live path: the judge's socket gets the judge's state, a Crane General's
    (his clan has a Daimyo) his own, with no other army's code anywhere in the frame, the
    public's the public one, with no army at all; each the same as ``GET …/state`` would
    answer that reader (but for the clock's moment)."""
    # given
    cookie = await database_sync_to_async(session_cookie)(judge=game24.judge)
    general = await database_sync_to_async(game24.player)("crane")
    token = await database_sync_to_async(game24.token)(general)
    judge = communicator(game24.id, cookie=cookie)
    player = communicator(game24.id, token=token)
    public = communicator(game24.id)
    for comm in (judge, player, public):
        await connected(comm)
    codes = await database_sync_to_async(army_codes)(game24)
    assert codes

    # when
    await database_sync_to_async(resolve_now)(game24)

    # then
    own = general.army.code
    viewers = (Viewer.judge(), Viewer.of_player(general), Viewer.public())
    texts = []
    for comm, viewer in zip((judge, player, public), viewers, strict=True):
        text = await next_event_text(comm)
        texts.append(text)
        event = json.loads(text)
        assert event["kind"] == "turn_resolved"
        expected = await database_sync_to_async(viewer_state_now)(game24, viewer)
        assert without_timing(event["state"]) == without_timing(expected)
    judge_text, player_text, public_text = texts
    assert all(f'"{c}"' in judge_text for c in codes)
    leaked = sorted(c for c in codes if c != own and f'"{c}"' in player_text)
    assert not leaked, f"{leaked} in {player_text}"
    assert [a["id"] for a in json.loads(player_text)["state"]["armies"]] == [own]
    leaked = sorted(c for c in codes if f'"{c}"' in public_text)
    assert not leaked, f"{leaked} in {public_text}"
    for comm in (judge, player, public):
        assert await comm.receive_nothing(timeout=0.1)
        await comm.disconnect()


async def test_a_state_sent_to_the_main_group_is_never_forwarded(game16: Game) -> None:
    """Even if other code put a ``state`` in the judges' and players' group, a socket never
    forwards it: what it sends is the view built for its own reader."""
    cookie = await database_sync_to_async(session_cookie)(judge=game16.judge)
    judge = communicator(game16.id, cookie=cookie)
    hello = await connected(judge)

    await get_channel_layer().group_send(
        tournament_group(game16.id),
        {
            "type": "tournament.event",
            "version": hello["version"] + 1,
            "kind": "x",
            "state": {"forged": True},
            "state_json": '{"forged":true}',
        },
    )

    event = await judge.receive_json_from(timeout=TIMEOUT)
    assert event["state"]["viewer"]["kind"] == "judge"
    assert "forged" not in json.dumps(event)
    await judge.disconnect()


def test_event_payload_drops_everything_but_version_kind_turn_and_phase() -> None:
    """What a service passes besides turn and phase never reaches the channel layer."""
    message = event_payload(
        version=7, kind="order", army="crab-1", clan="crab", province="x", turn=3, phase="running"
    )

    assert message == {
        "type": "tournament.event",
        "version": 7,
        "kind": "order",
        "turn": 3,
        "phase": "running",
    }
    assert "turn" not in event_payload(version=1, kind="x", turn="crab-1")


async def test_consumer_forwards_only_public_fields_of_a_group_message(game16: Game) -> None:
    """Even a message sent to the group by other code with extra fields is trimmed."""
    comm = communicator(game16.id)
    hello = await connected(comm)

    await get_channel_layer().group_send(
        tournament_public_group(game16.id),
        {"type": "tournament.event", "version": hello["version"] + 1, "kind": "x", "army": "a"},
    )

    assert await comm.receive_json_from(timeout=TIMEOUT) == {
        "type": "event",
        "version": hello["version"] + 1,
        "kind": "x",
    }
    await comm.disconnect()


# --- Who is turned away --------------------------------------------------------------------


async def test_player_of_another_tournament_is_refused(make_game: Callable[..., Game]) -> None:
    """By ``?token=`` or by the session he joined with: close code 4403."""
    ours = await database_sync_to_async(make_game)(16, name="Ours")
    theirs = await database_sync_to_async(make_game)(16, name="Theirs")
    stranger = await database_sync_to_async(theirs.player)("crab")
    token = await database_sync_to_async(theirs.token)(stranger)
    cookie = await database_sync_to_async(session_cookie)(join_token=token)

    assert await closed_with(communicator(ours.id, token=token)) == CLOSE_OTHER_TOURNAMENT
    assert await closed_with(communicator(ours.id, cookie=cookie)) == CLOSE_OTHER_TOURNAMENT
    await connected(communicator(theirs.id, token=token))


async def test_unknown_tournament_is_refused(game16: Game) -> None:
    assert await closed_with(communicator(game16.id + 1000)) == CLOSE_NO_TOURNAMENT


async def test_invalid_token_is_refused_not_treated_as_public(game16: Game) -> None:
    """As the API's 401: a revoked link or a forged key is not quietly the public."""
    assert await closed_with(communicator(game16.id, token="1:forged")) == CLOSE_BAD_TOKEN
    assert await closed_with(communicator(game16.id, token="sl5rj_nope")) == CLOSE_BAD_TOKEN


async def test_cross_origin_handshake_is_refused(game16: Game) -> None:
    """A page of another site cannot open the socket with the visitor's cookies."""
    cookie = await database_sync_to_async(session_cookie)(judge=game16.judge)

    for origin in ("http://evil.example", None):
        comm = communicator(game16.id, cookie=cookie, origin=origin)
        ok, _ = await comm.connect(timeout=TIMEOUT)
        assert not ok, origin
        await comm.disconnect()


async def handshake_ok(tournament_id: int, *, host: str, origin: str) -> bool:
    comm = WebsocketCommunicator(
        application,
        f"/ws/tournaments/{tournament_id}/",
        headers=[(b"host", host.encode()), (b"origin", origin.encode())],
    )
    ok, _ = await comm.connect(timeout=TIMEOUT)
    await comm.disconnect()
    return bool(ok)


async def test_the_origin_must_have_the_sites_own_scheme_host_and_port(
    game16: Game, settings: Any
) -> None:
    """Not only the host: another port or the other scheme is another site."""
    site = "localhost:8000"

    assert await handshake_ok(game16.id, host=site, origin="http://localhost:8000")
    assert await handshake_ok(game16.id, host="localhost", origin="http://localhost:80")
    assert not await handshake_ok(game16.id, host=site, origin="http://localhost:9999")
    assert not await handshake_ok(game16.id, host=site, origin="http://localhost")
    assert not await handshake_ok(game16.id, host=site, origin="https://localhost:8000")
    assert not await handshake_ok(game16.id, host=site, origin="null")
    # a Host that is not allowed is refused even with the matching Origin
    assert not await handshake_ok(game16.id, host="evil.example", origin="http://evil.example")

    # TLS served by the venue server itself: the page is https
    settings.SL5R_TLS = ("cert.pem", "key.pem")
    assert await handshake_ok(game16.id, host=site, origin="https://localhost:8000")
    assert not await handshake_ok(game16.id, host=site, origin="http://localhost:8000")


async def test_behind_a_proxy_the_scheme_comes_from_its_header(game16: Game, settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    path = f"/ws/tournaments/{game16.id}/"

    async def ok(origin: str, proto: str | None) -> bool:
        headers = [(b"host", b"localhost"), (b"origin", origin.encode())]
        if proto is not None:
            headers.append((b"x-forwarded-proto", proto.encode()))
        comm = WebsocketCommunicator(application, path, headers=headers)
        accepted, _ = await comm.connect(timeout=TIMEOUT)
        await comm.disconnect()
        return bool(accepted)

    assert await ok("https://localhost", "https")
    assert not await ok("http://localhost", "https")
    assert await ok("http://localhost", None)
    assert not await ok("https://localhost", None)


async def test_a_csrf_trusted_origin_may_open_the_socket(game16: Game, settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://referee.example.com", "https://*.example.org"]

    assert await handshake_ok(game16.id, host="localhost", origin="https://referee.example.com")
    assert await handshake_ok(game16.id, host="localhost", origin="https://a.example.org")
    assert not await handshake_ok(game16.id, host="localhost", origin="http://referee.example.com")


# --- What clients may send -----------------------------------------------------------------


async def test_a_pong_says_a_version_no_event_announced(
    game16: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: an event lost on its way (a full channel) leaves the socket open and the
    page on an old version; once it is late (issue 42: ``EVENT_LATE_SECONDS``), the next pong
    carries the newer version without ``since``, so the page fetches."""
    monkeypatch.setattr(consumers, "VERSION_FRESH_SECONDS", 0.0)
    monkeypatch.setattr(hubs, "EVENT_LATE_SECONDS", 0.0)
    comm = communicator(game16.id)
    hello = await connected(comm)

    def moved_without_an_event() -> None:
        Campaign.objects.filter(pk=game16.tournament.campaign_id).update(version=F("version") + 1)

    await database_sync_to_async(moved_without_an_event)()
    await comm.send_json_to({"type": "ping"})

    pong = await comm.receive_json_from(timeout=TIMEOUT)
    assert pong == {"type": "pong", "version": hello["version"] + 1}
    await comm.disconnect()


async def test_ping_gets_pong(game16: Game) -> None:
    comm = communicator(game16.id)
    await connected(comm)

    await comm.send_json_to({"type": "ping"})

    version = await database_sync_to_async(version_of)(game16)
    pong = await comm.receive_json_from(timeout=TIMEOUT)
    assert pong == {"type": "pong", "version": version, "since": version}
    await comm.disconnect()


async def test_a_pong_overtaking_its_event_does_not_make_the_page_fetch(
    game16: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: at a busy deadline the database says a version whose event is still on
    its way to the hub; for ``EVENT_LATE_SECONDS`` the pong vouches only for what the hub
    delivered, so the page waits for its event instead of fetching."""
    monkeypatch.setattr(consumers, "VERSION_FRESH_SECONDS", 0.0)
    comm = communicator(game16.id)
    hello = await connected(comm)

    def moved_without_an_event() -> None:
        Campaign.objects.filter(pk=game16.tournament.campaign_id).update(version=F("version") + 1)

    await database_sync_to_async(moved_without_an_event)()
    await comm.send_json_to({"type": "ping"})

    pong = await comm.receive_json_from(timeout=TIMEOUT)
    assert pong == {"type": "pong", "version": hello["version"], "since": hello["version"]}
    await comm.disconnect()


async def pong_at(comm: WebsocketCommunicator, version: int) -> dict[str, Any]:
    """Ping until the pong says ``version`` (the hub has delivered it), and return that pong."""
    for _ in range(50):
        await comm.send_json_to({"type": "ping"})
        pong: dict[str, Any] = await comm.receive_json_from(timeout=TIMEOUT)
        assert pong["type"] == "pong", pong
        if pong["version"] == version:
            return pong
    raise AssertionError(f"no pong said version {version}: the last said {pong}")


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"text_data": '{"type": "subscribe", "group": "tournament.2"}'}, CLOSE_BAD_MESSAGE),
        ({"text_data": "not json"}, CLOSE_BAD_MESSAGE),
        ({"text_data": '["ping"]'}, CLOSE_BAD_MESSAGE),
        ({"text_data": json.dumps({"type": "ping", "pad": "x" * 1024})}, CLOSE_TOO_BIG),
        ({"bytes_data": b"\x00\x01"}, CLOSE_UNSUPPORTED_DATA),
    ],
    ids=["other-type", "not-json", "not-object", "too-big", "binary"],
)
async def test_anything_but_a_ping_closes_with_a_clear_code(
    game16: Game, frame: dict[str, Any], code: int
) -> None:
    comm = communicator(game16.id)
    await connected(comm)

    await comm.send_to(**frame)

    assert await comm.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": code}
    await comm.disconnect()


# --- Versions and resync -------------------------------------------------------------------


async def test_client_that_missed_an_event_sees_a_newer_version_in_hello(game16: Game) -> None:
    """The channel layer may drop a message: the next connection's hello shows the gap."""
    # given: a client that knew version v, then went away
    comm = communicator(game16.id)
    before = (await connected(comm))["version"]
    await comm.disconnect()

    # when: the turn resolves while nobody listens
    await database_sync_to_async(resolve_now)(game16)

    # then
    again = communicator(game16.id)
    after = (await connected(again))["version"]
    assert after > before
    assert after == await database_sync_to_async(version_of)(game16)
    await again.disconnect()


async def test_versions_grow_strictly_with_each_event(game16: Game, judge_key: str) -> None:
    """Every change is a new, larger version; the last one is the campaign's.

    Seen by a judge, who is told of every change (the public is not told of orders).
    """
    comm = communicator(game16.id, token=judge_key)
    versions = [(await connected(comm))["version"]]

    def changes() -> None:
        now = timezone.now()
        actor = game16.judge_actor
        hold(game16, "crab")
        hold(game16, "crane")
        services.clock_pause(tournament_id=game16.id, actor=actor, now=now)
        services.clock_resume(tournament_id=game16.id, actor=actor, now=now)
        services.clock_extend(tournament_id=game16.id, seconds=60, actor=actor, now=now)
        resolve_now(game16)
        resolve_now(game16)

    await database_sync_to_async(changes)()

    # Seven changes: a frame each, or fewer when the hub found several waiting at once
    # (it sends their newest version, with the view as of then).
    final = await database_sync_to_async(version_of)(game16)
    events = []
    while versions[-1] < final:
        events.append(await comm.receive_json_from(timeout=TIMEOUT))
        versions.append(events[-1]["version"])
    assert all(a < b for a, b in pairwise(versions)), versions
    assert versions[-1] == final and 1 <= len(events) <= 7
    assert events[-1]["turn"] == 2
    assert events[-1]["state"]["tournament"]["turn"] == 3
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()


# --- The production channel layer ----------------------------------------------------------


@pytest.mark.redis
async def test_event_reaches_the_socket_through_redis(
    redis_url: str, settings: Any, game16: Game
) -> None:
    """With channels_redis, a committed change reaches a connected client."""
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [redis_url],
                "prefix": f"sl5r-test-{uuid.uuid4().hex[:8]}",
            },
        }
    }
    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"
    comm = communicator(game16.id)
    hello = await connected(comm)
    try:
        # a plain group_send from this loop
        await layer.group_send(
            tournament_public_group(game16.id),
            {"type": "tournament.event", "version": hello["version"], "kind": "ping-test"},
        )
        assert (await comm.receive_json_from(timeout=TIMEOUT))["kind"] == "ping-test"

        # and a service, from its thread, after its commit
        await database_sync_to_async(resolve_now)(game16)
        event = await comm.receive_json_from(timeout=TIMEOUT)
        assert event["kind"] == "turn_resolved"
        assert event["version"] == await database_sync_to_async(version_of)(game16)
        assert event["state"]["tournament"]["turn"] == 2  # through msgpack intact
    finally:
        await comm.disconnect()
        await layer.flush()
        await layer.close_pools()


async def test_the_public_is_not_told_of_orders(game16: Game) -> None:
    """An order changes nothing the public sees: no event, no public state built for it."""
    comm = communicator(game16.id)
    await connected(comm)
    await database_sync_to_async(hold)(game16, "crab")
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_the_server_sends_each_socket_its_pong_without_a_ping(
    game16: Game, settings: Any
) -> None:
    """Issue 42: the hub's heartbeat sends every ready socket its own pong, so that a page
    knows the server hears it without pinging (live.js pings only when those are late)."""
    settings.SL5R_LIVE_HEARTBEAT_SECONDS = 0.05
    public = communicator(game16.id)
    hello = await connected(public)

    pong = await public.receive_json_from(timeout=TIMEOUT)

    assert pong == {"type": "pong", "version": hello["version"], "since": hello["version"]}
    await public.disconnect()
