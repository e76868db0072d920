"""The table of the server's live messages, ``static/js/live_messages.json``: what each type
carries, which fields may be null or left out. The server's consumers send nothing else,
live.js handles every type in it and guards what may be null, and the phones of
``tests/hosts`` read every frame through it (``tests.hosts.live_messages``).

The table was made after the phones of the several-machines stories died on the server's
``{"type": "pong", "version": null}`` (the database away), which live.js had always guarded.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import certifi
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import OperationalError
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_create
from referees.live import consumers
from referees.live import hubs as fanout
from referees.live.hubs import event_frame
from tests.hosts.live_messages import (
    JSON_TYPES,
    TABLE,
    UnfitMessage,
    message_problems,
    message_read,
    messages,
)
from tests.hosts.phone import Page, PageFailed, Phones
from tests.referees.conftest import Game
from tests.referees.live.test_consumers import communicator, connected, hold, resolve_now

BASE_DIR = Path(__file__).resolve().parents[3]
LIVE_JS = BASE_DIR / "static" / "js" / "live.js"
TIMEOUT = 5
FIELD_KEYS = {"type", "nullable", "optional"}


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> Iterator[None]:
    """The embedded default, whatever REDIS_URL the environment sets."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    yield


def test_the_table_gives_each_field_a_json_type_and_nothing_else() -> None:
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    assert set(table) == {"$comment", "messages"}
    assert table["messages"], "no message in the table"
    for kind, spec in table["messages"].items():
        assert set(spec) == {"when", "fields"}, kind
        for name, field in spec["fields"].items():
            assert name != "type", f"{kind}: 'type' is the message's name, not a field"
            assert set(field) <= FIELD_KEYS and field["type"] in JSON_TYPES, (kind, name, field)
            assert all(isinstance(field.get(k, False), bool) for k in ("nullable", "optional"))


# --- The server -----------------------------------------------------------------------------


async def frames(comm: WebsocketCommunicator) -> list[str]:
    """Every text frame the socket has been sent and not yet read."""
    texts = []
    while not await comm.receive_nothing(timeout=0.3):
        output = await comm.receive_output(timeout=TIMEOUT)
        if output["type"] == "websocket.send":
            texts.append(output["text"])
    return texts


@pytest.mark.django_db(transaction=True)
async def test_the_server_sends_only_messages_of_the_table_and_every_one_of_them(
    game16: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge's, a General's and the public's sockets through a turn: hellos, pongs (with
    ``since``; one while the database is away: its version null, no ``since``), an order
    (the judge's view; nothing for another clan's General), a view that could not be built
    (no state), the turn resolved (``turn``, ``phase``, each his ``state``), the game ended.
    Every frame fits the table, and every type and field of the table, and every null it
    allows, is sent."""
    # given
    key = await database_sync_to_async(judge_key_create)(user=game16.judge, label="table")
    crane = await database_sync_to_async(game16.player)("crane")
    token = await database_sync_to_async(game16.token)(crane)
    sockets = [
        communicator(game16.id, token=key.key),
        communicator(game16.id, token=token),
        communicator(game16.id),
    ]
    texts = []
    for comm in sockets:
        hello = await connected(comm)
        texts.append(json.dumps(hello))

    # when
    for comm in sockets:
        await comm.send_json_to({"type": "ping"})
    await database_sync_to_async(hold)(game16, "crab")
    for comm in sockets:
        texts += await frames(comm)
    with monkeypatch.context() as away:
        away.setattr(consumers, "VERSION_FRESH_SECONDS", 0.0)

        def database_away(*args: Any, **kwargs: Any) -> Any:
            raise OperationalError("the data host is away")

        away.setattr(consumers, "campaign_version", database_away)
        away.setattr(fanout, "views_json", database_away)
        await sockets[0].send_json_to({"type": "ping"})
        await database_sync_to_async(hold)(game16, "crane")
        texts += await frames(sockets[0])

    def turn_played() -> None:
        resolve_now(game16)
        services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())

    await database_sync_to_async(turn_played)()
    for comm in sockets:
        texts += await frames(comm)
        await comm.disconnect()

    # then
    unfit = {text: message_problems(json.loads(text)) for text in texts}
    assert not {text: problems for text, problems in unfit.items() if problems}
    sent = [json.loads(text) for text in texts]
    table = messages()
    assert {m["type"] for m in sent} == set(table)
    for kind, fields in table.items():
        of_kind = [m for m in sent if m["type"] == kind]
        for name, field in fields.items():
            assert any(name in m for m in of_kind), f"no {kind} carried {name}"
            if field.get("nullable"):
                assert any(m.get(name, 0) is None for m in of_kind), f"no {kind} had {name} null"
            if field.get("optional"):
                assert any(name not in m for m in of_kind), f"every {kind} carried {name}"


# What a consumer sends itself: ``send_json({"type": …})``, or a message it builds to send
# (``return {"type": "pong", …}``).
SENT_TYPE = re.compile(r"(?:send_json\(|return )\s*\{\s*\"type\":\s*\"(\w+)\"")


def test_every_type_the_consumers_write_is_in_the_table() -> None:
    """What the consumers send themselves (``send_json``), and the events' frames the hubs
    write (``event_frame``)."""
    written = {
        kind
        for path in sorted((BASE_DIR / "referees").rglob("*.py"))
        for kind in SENT_TYPE.findall(path.read_text(encoding="utf-8"))
    }
    written.add(json.loads(event_frame({"version": 1, "kind": "clock"}, public=False))["type"])
    assert written == set(messages())


# --- live.js --------------------------------------------------------------------------------


def on_message_body(source: str) -> str:
    """The text of live.js's ``function onMessage(message) { … }`` (braces counted)."""
    start = source.index("function onMessage(message) {")
    depth = 0
    for index in range(source.index("{", start), len(source)):
        depth += {"{": 1, "}": -1}.get(source[index], 0)
        if depth == 0:
            return source[start : index + 1]
    raise AssertionError("onMessage has no end")


def guarded(branch: str, name: str) -> bool:
    """Whether the first use of ``message.<name>`` in ``branch`` tests it for a value."""
    first = branch.index(f"message.{name}")
    guard = re.compile(
        rf"Number\.isInteger\(message\.{name}\)|typeof message\.{name}\b"
        rf"|message\.{name}\s*(?:!==?|===?)\s*(?:null|undefined)|message\.{name}\?\.",
    )
    found = guard.search(branch)
    return found is not None and found.start() <= first < found.end()


def test_live_js_handles_every_message_of_the_table_and_guards_what_may_be_null() -> None:
    """Each type has its branch in onMessage, which reads only the table's fields of that
    type, and tests a field that may be null before its first use (``pong``'s version)."""
    body = on_message_body(LIVE_JS.read_text(encoding="utf-8"))
    starts = list(re.finditer(r"message\.type === \"(\w+)\"", body))
    branches = {
        match[1]: body[match.start() : (starts[n + 1].start() if n + 1 < len(starts) else None)]
        for n, match in enumerate(starts)
    }
    table = messages()
    assert set(branches) == set(table), f"live.js handles {sorted(branches)}"
    for kind, branch in branches.items():
        read = set(re.findall(r"message\.(\w+)", branch)) - {"type"}
        assert read <= set(table[kind]), f"live.js reads {read - set(table[kind])} of a {kind}"
        for name in read:
            if table[kind][name].get("nullable"):
                assert guarded(branch, name), f"live.js uses a {kind}'s {name} unguarded"


# --- The phones of tests/hosts --------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "problem"),
    [
        ('{"type": "hello", "version": null}', "version: is null"),
        ('{"type": "hello"}', "version: missing"),
        ('{"type": "pong", "version": true}', "version: is not of type integer"),
        ('{"type": "event", "version": 3}', "kind: missing"),
        ('{"type": "event", "version": 3, "kind": "order", "army": "crab-1"}', "army: not a"),
        ('{"type": "subscribed"}', "unknown type 'subscribed'"),
        ("[1]", "not a JSON object"),
        ("{", "not JSON"),
    ],
)
def test_the_phones_refuse_a_frame_that_is_not_in_the_table(frame: str, problem: str) -> None:
    with pytest.raises(UnfitMessage, match=re.escape(problem)):
        message_read(frame)


def test_the_phones_read_a_null_version_and_fill_in_what_an_event_leaves_out() -> None:
    assert message_read('{"type": "pong", "version": null}') == {
        "type": "pong", "version": None, "since": None,
    }  # fmt: skip
    assert message_read('{"type": "pong", "version": 5, "since": 3}')["since"] == 3
    event = message_read('{"type": "event", "version": 4, "kind": "order"}')
    assert event == {
        "type": "event", "version": 4, "kind": "order",
        "turn": None, "phase": None, "state": None,
    }  # fmt: skip


async def test_a_phone_takes_a_pong_without_a_version_as_live_js_does() -> None:
    """It says the socket is alive and nothing about the version: no fetch, no failure. A
    pong vouching for the view the page holds (``since``) moves its version on."""
    phones = Phones("https://referee.example.org", certifi.where())
    page = Page(tournament=1, token="t" * 20, version=5)
    pong = message_read('{"type": "pong", "version": null}')
    unchanged = message_read('{"type": "pong", "version": 6, "since": 5}')
    for message in (pong, unchanged):
        phones.on_message(page, message, http=None)  # nothing to fetch
    assert (page.pongs_without_version, page.version, phones.tasks) == (1, 6, set())
    # One naming a newer version is given a moment to be followed by its event.
    phones.on_message(page, message_read('{"type": "pong", "version": 7}'), http=None)
    assert page.heard == 7 and len(phones.tasks) == 1
    for task in phones.tasks:
        task.cancel()
    await asyncio.gather(*phones.tasks, return_exceptions=True)
    phones.failure_raise()


async def test_a_page_task_that_dies_fails_every_command_after_it() -> None:
    phones = Phones("https://referee.example.org", certifi.where())

    async def page_run() -> None:
        raise TypeError("int() argument must be … not 'NoneType'")

    phones.spawn(page_run(), "page tttttttt")
    # A wait for the pages ends at once, and says why.
    await asyncio.wait_for(phones.until(lambda: False, within=60), timeout=TIMEOUT)
    with pytest.raises(PageFailed, match=r"(?s)page tttttttt died: .*TypeError: int"):
        phones.failure_raise()
