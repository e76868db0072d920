"""The shapes several of the API's resources share: clan and role ids, the answer of a
judge's action (``DoneOut``), a player and his join link.
"""

from __future__ import annotations

from typing import Literal

from ninja import Field, Schema

ClanId = Literal["crab", "crane", "dragon", "lion", "phoenix", "scorpion", "shadowlands", "unicorn"]
RoleId = Literal["general", "daimyo", "karo"]


class PlayerOut(Schema):
    id: int
    name: str
    clan: str
    role: str
    army: str | None


class PlayerLinkOut(PlayerOut):
    token: str = Field(..., description="the join token; empty when the link is revoked")
    join_url: str | None = Field(..., description="the join link; null when revoked")


class DoneOut(Schema):
    ok: bool = True
    phase: str
    version: int
