"""The public sockets' hub (``referees.live.hubs``): one receive per process, one frame for all.

Through the whole ASGI application, as ``test_consumers.py``: public sockets of a
tournament share one member of ``tournament.<id>.public``; judges and players keep their
own consumers in ``tournament.<id>``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.utils import timezone

from referees import services
from referees.live import hubs as fanout
from referees.live.events import tournament_group, tournament_public_group
from tests.referees.conftest import Game
from tests.referees.live.test_consumers import (
    TIMEOUT,
    communicator,
    connected,
    next_event_text,
    resolve_now,
    session_cookie,
    version_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> Iterator[None]:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    yield


def public_members(tournament_id: int) -> int:
    layer = get_channel_layer()
    return len(layer.groups.get(tournament_public_group(tournament_id), {}))


async def test_public_sockets_share_one_group_member_and_all_get_the_same_frame(
    game16: Game,
) -> None:
    # given: five public sockets in this process
    sockets = [communicator(game16.id) for _ in range(5)]
    for comm in sockets:
        await connected(comm)
    hub = fanout.hub_of(get_channel_layer(), game16.id)
    assert hub is not None and len(hub.members) == 5
    assert public_members(game16.id) == 1

    # when
    await database_sync_to_async(resolve_now)(game16)

    # then: the layer delivered the event once, every socket got the same text
    texts = [await next_event_text(comm) for comm in sockets]
    assert len(set(texts)) == 1
    event = json.loads(texts[0])
    assert event["kind"] == "turn_resolved"
    assert event["version"] == await database_sync_to_async(version_of)(game16)
    assert event["state"]["tournament"]["version"] == event["version"]
    assert hub.received == 1
    for comm in sockets:
        await comm.disconnect()


async def test_judges_and_players_share_one_member_of_the_main_group_each_with_his_view(
    game16: Game,
) -> None:
    """Issue 33: the judges' and players' sockets of a process are one member of
    ``tournament.<id>`` (the viewers' hub), not one each; the public's are in the public
    hub. One layer message per event, whatever the sockets; each gets his own view."""
    cookie = await database_sync_to_async(session_cookie)(judge=game16.judge)
    judge = communicator(game16.id, cookie=cookie)
    generals = [
        await database_sync_to_async(game16.player)(clan) for clan in ("crab", "crane", "lion")
    ]
    tokens = [await database_sync_to_async(game16.token)(g) for g in generals]
    players = [communicator(game16.id, token=t) for t in tokens]
    public = communicator(game16.id)
    for comm in (judge, *players, public):
        await connected(comm)
    layer = get_channel_layer()
    viewers = fanout.hub_of(layer, game16.id, fanout.ViewerHub)
    assert viewers is not None and len(viewers.members) == 4
    assert len(layer.groups.get(tournament_group(game16.id), {})) == 1
    public_hub = fanout.hub_of(layer, game16.id)
    assert public_hub is not None and len(public_hub.members) == 1

    await database_sync_to_async(resolve_now)(game16)

    judge_state = json.loads(await next_event_text(judge))["state"]
    assert judge_state["viewer"]["kind"] == "judge"
    for general, comm in zip(generals, players, strict=True):
        state = json.loads(await next_event_text(comm))["state"]
        assert state["viewer"]["player"]["id"] == general.pk
    assert json.loads(await next_event_text(public))["state"]["viewer"]["kind"] == "public"
    assert viewers.received == 1
    for comm in (judge, *players, public):
        await comm.disconnect()
    assert fanout.hub_of(layer, game16.id, fanout.ViewerHub) is None
    assert fanout.hub_of(layer, game16.id) is None


async def test_a_view_is_not_sent_once_the_join_link_it_was_admitted_with_is_replaced(
    game16: Game,
) -> None:
    """A stand-in took the seat (the link was reissued): the old device's socket is told
    of the change but gets no view; its page's fetch is refused as the API refuses it."""
    general = await database_sync_to_async(game16.player)("crab")
    token = await database_sync_to_async(game16.token)(general)
    comm = communicator(game16.id, token=token)
    await connected(comm)

    def reissue() -> None:
        services.player_token_reissue(player=general, actor=game16.judge_actor, now=timezone.now())

    await database_sync_to_async(reissue)()
    await database_sync_to_async(resolve_now)(game16)

    event = json.loads(await next_event_text(comm))
    assert event["kind"] == "turn_resolved"
    assert "state" not in event and "since" not in event, event
    await comm.disconnect()


async def test_the_last_public_socket_out_takes_the_hub_out_of_the_group(game16: Game) -> None:
    first, second = communicator(game16.id), communicator(game16.id)
    await connected(first)
    await connected(second)

    await first.disconnect()
    assert fanout.hub_of(get_channel_layer(), game16.id) is not None
    await second.disconnect()

    assert fanout.hub_of(get_channel_layer(), game16.id) is None
    assert public_members(game16.id) == 0


async def test_a_socket_whose_send_fails_is_dropped_and_the_others_still_get_the_frame(
    game16: Game,
) -> None:
    healthy, broken = communicator(game16.id), communicator(game16.id)
    await connected(healthy)
    await connected(broken)
    hub = fanout.hub_of(get_channel_layer(), game16.id)
    assert hub is not None
    healthy_key, dead_key = list(hub.members)  # in the order they joined

    async def dead(_: Any) -> None:
        raise OSError("connection reset")

    hub.members[dead_key].send = dead

    await hub.broadcast('{"type":"event","version":1,"kind":"x"}')

    assert list(hub.members) == [healthy_key]
    assert json.loads(await next_event_text(healthy))["kind"] == "x"
    await healthy.disconnect()
    await broken.disconnect()


async def test_a_frame_arriving_before_hello_is_sent_after_it(game16: Game) -> None:
    """The hello is always first; an event received meanwhile is held, then sent."""
    layer = get_channel_layer()
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message["text"])

    hub = await fanout.hub_join(layer=layer, tournament_id=game16.id, key=1, send=send)
    await hub.broadcast("early")
    assert sent == []
    sent.append("hello")
    await hub.ready(1, 0)
    await hub.broadcast("late")

    assert sent == ["hello", "early", "late"]
    await fanout.hub_leave(hub=hub, key=1)
    assert fanout.hub_of(layer, game16.id) is None


async def test_a_client_that_missed_an_event_still_sees_the_newer_version_in_hello(
    game16: Game,
) -> None:
    before = await database_sync_to_async(version_of)(game16)
    await database_sync_to_async(resolve_now)(game16)  # nobody connected: nobody told

    public = communicator(game16.id)
    hello = await connected(public)

    assert hello["version"] > before
    assert await public.receive_nothing(timeout=0.2)
    await public.disconnect()
    assert fanout.hub_of(get_channel_layer(), game16.id) is None


async def test_an_event_sent_to_the_public_group_reaches_every_socket_once(game16: Game) -> None:
    sockets = [communicator(game16.id) for _ in range(3)]
    for comm in sockets:
        hello = await connected(comm)
    await get_channel_layer().group_send(
        tournament_public_group(game16.id),
        {"type": "tournament.event", "version": hello["version"] + 1, "kind": "x", "army": "a"},
    )
    for comm in sockets:
        assert await comm.receive_json_from(timeout=TIMEOUT) == {
            "type": "event",
            "version": hello["version"] + 1,
            "kind": "x",
        }
        assert await comm.receive_nothing(timeout=0.1)
        await comm.disconnect()


async def test_two_processes_on_redis_each_take_the_event_once_for_all_their_sockets(
    redis_url: str,
) -> None:
    """Two channels_redis layers stand for two server processes (each has its own hub):
    the public group has one member per process, and a group_send reaches every socket of
    both, once, with the frame built once per process."""
    prefix = f"sl5r-fanout-test-{id(object())}"
    processes = [RedisChannelLayer(hosts=[redis_url], prefix=prefix) for _ in range(2)]
    sender = RedisChannelLayer(hosts=[redis_url], prefix=prefix)
    tournament_id = 987_654
    got: dict[int, list[str]] = {key: [] for key in range(6)}
    hubs = []
    try:
        for key in range(6):
            layer = processes[key % 2]

            async def send(message: Any, key: int = key) -> None:
                got[key].append(message["text"])

            hub = await fanout.hub_join(
                layer=layer, tournament_id=tournament_id, key=key, send=send
            )
            await hub.ready(key, 0)
            hubs.append(hub)
        assert len({id(hub) for hub in hubs}) == 2

        await sender.group_send(
            tournament_public_group(tournament_id),
            {
                "type": "tournament.event",
                "version": 7,
                "kind": "turn_resolved",
                "state_json": '{"a":1}',
            },
        )
        for _ in range(200):
            if all(got.values()):
                break
            await asyncio.sleep(0.02)

        assert all(
            texts == ['{"type":"event","version":7,"kind":"turn_resolved","state":{"a":1}}']
            for texts in got.values()
        ), got
        assert sorted(hub.received for hub in {id(h): h for h in hubs}.values()) == [1, 1]
    finally:
        for key, hub in enumerate(hubs):
            await fanout.hub_leave(hub=hub, key=key)
        for layer in [*processes, sender]:
            await layer.flush()
    assert fanout.hub_of(processes[0], tournament_id) is None


def test_events_received_together_change_every_view_any_of_them_changed() -> None:
    """Issue 33: a hub that fell behind sends one frame for every event queued meanwhile."""
    orders = [
        {
            "type": "tournament.event",
            "version": v,
            "kind": "order",
            "route": {"kinds": ["order"], "armies": [army], "clans": [clan]},
        }
        for v, army, clan in ((7, "crab-1", "crab"), (5, "lion-2", "lion"), (6, "crab-1", "crab"))
    ]
    merged = fanout.events_merged(orders)
    assert merged["version"] == 7 and merged["since"] == 4
    assert merged["route"] == {
        "kinds": ["order"],
        "armies": ["lion-2", "crab-1"],
        "clans": ["lion", "crab"],
    }
    view = fanout.View(kind="player", who=3)
    lion = fanout.Sight(view=view, role="general", clan="lion", army="lion-2")
    crane = fanout.Sight(view=view, role="daimyo", clan="crane", army=None)
    assert fanout.view_changed(lion, merged["route"])
    assert not fanout.view_changed(crane, merged["route"])
    # A version missing in between: nobody may be told that nothing changed.
    gap = fanout.events_merged([orders[0], orders[1]])
    assert gap["route"] == {} and "since" not in gap
    assert fanout.view_changed(crane, gap["route"])
    # A turn resolved among them: every view changed, and the frame says the newest turn.
    resolved = {
        "type": "tournament.event",
        "version": 8,
        "kind": "turn_resolved",
        "turn": 1,
        "phase": "running",
        "route": {"kinds": ["turn_resolved"]},
    }
    merged = fanout.events_merged([*orders, resolved])
    assert merged["kind"] == "turn_resolved" and merged["turn"] == 1
    assert fanout.view_changed(crane, merged["route"])


async def send_nowhere(message: Any) -> None:
    """A socket's ASGI send for a hub built by hand: nothing is sent in these tests."""


async def test_a_pong_says_a_lost_version_once_that_socket_was_behind_it_for_the_late_window() -> (
    None
):
    """Issue 42: each socket's own lateness. One whose view the hub vouches up to the
    database's version is told so; another, behind it longer than ``EVENT_LATE_SECONDS``, is
    told the newer version without ``since`` (it fetches), whatever the first one's pongs."""
    hub = fanout.PublicHub(None, tournament_id=1)
    ahead, behind = fanout.Member(send_nowhere), fanout.Member(send_nowhere)
    hub.members = {1: ahead, 2: behind}
    hub.seen, ahead.current, behind.current = 5, 7, 5

    on_its_way = hub.pong(2, 7)
    behind.behind = (7, asyncio.get_running_loop().time() - fanout.EVENT_LATE_SECONDS - 1)
    vouched = hub.pong(1, 7)
    lost = hub.pong(2, 7)

    assert on_its_way == {"type": "pong", "version": 5, "since": 5}
    assert vouched == {"type": "pong", "version": 7, "since": 7}
    assert lost == {"type": "pong", "version": 7}
