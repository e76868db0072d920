"""Raw RFC 6455 frames, for the tests that send what a browser never would.

The one place where websocket frames are written by hand (the other tests use
``tests/live_clients.py``): what goes on the wire is exactly what the abuse test wrote, and
what comes back is read frame by frame, with nothing a client library would add, check or
answer for it. A client's frames are masked (RFC 6455 5.3); the server's (Daphne's) are
read unmasked and unfragmented.
"""

from __future__ import annotations

import asyncio
import secrets
import struct


def websocket_frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame: masked, as RFC 6455 requires of a client."""
    mask = secrets.token_bytes(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 65536:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    # XOR through integers: a bytes comprehension takes seconds for a 2 MiB payload.
    repeated = (mask * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        size, "big"
    )
    return header + mask + masked


async def websocket_frame_read(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One server frame: its opcode and payload (a server's frames are never masked)."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        (size,) = struct.unpack("!H", await reader.readexactly(2))
    elif size == 127:
        (size,) = struct.unpack("!Q", await reader.readexactly(8))
    return first & 0x0F, await reader.readexactly(size)
