"""The bare baseline of ``fanout.py``: an asyncio websocket server writing one pre-built frame.

No Django, no Channels, no channel layer: ``websockets``' asyncio server keeps the open
sockets in a set, and on a trigger writes the same text frame to all of them at once
(``websockets.asyncio.server.broadcast``: the text encoded once, framed per socket, no
waiting on any socket). ``fanout.py --bare`` runs two of these (as the site runs two ASGI
processes), gives them the frame its site clients received for a resolved turn, and points
the same clients (``benchmarks/clients.py``) at them.

    .venv/bin/python benchmarks/bare_fanout.py --port 8765 --frame frame.json

Any path is a client socket, except ``/trigger``: each text message there makes the
server stamp the moment (``time.time()``), write the frame to every client socket, and answer
``{"t0": <stamp>, "sent": <sockets>, "write_s": <seconds the writes took>}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from websockets.asyncio.server import ServerConnection, broadcast, serve

HOST = "127.0.0.1"


async def main_async(port: int, frame: str) -> None:
    clients: set[ServerConnection] = set()

    async def handler(connection: ServerConnection) -> None:
        path = connection.request.path if connection.request is not None else ""
        if path == "/trigger":
            async for _ in connection:
                t0 = time.time()
                broadcast(clients, frame)
                written = time.time()
                await connection.send(
                    json.dumps({"t0": t0, "sent": len(clients), "write_s": written - t0})
                )
            return
        clients.add(connection)
        try:
            await connection.wait_closed()
        finally:
            clients.discard(connection)

    async with serve(handler, HOST, port, ping_interval=None, max_size=None, backlog=2048):
        print("ready", flush=True)
        await asyncio.Future()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--frame", type=Path, required=True, help="the frame's text, UTF-8")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.port, args.frame.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
