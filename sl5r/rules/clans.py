"""The eight clans (R1) and their names in the tournament's two languages."""

from __future__ import annotations

from typing import Final

CRAB: Final = "crab"
CRANE: Final = "crane"
DRAGON: Final = "dragon"
LION: Final = "lion"
PHOENIX: Final = "phoenix"
SCORPION: Final = "scorpion"
SHADOWLANDS: Final = "shadowlands"
UNICORN: Final = "unicorn"

CLANS: Final[tuple[str, ...]] = (
    CRAB,
    CRANE,
    DRAGON,
    LION,
    PHOENIX,
    SCORPION,
    SHADOWLANDS,
    UNICORN,
)

# Seed 003's own spelling, used by the Russian interface.
CLAN_NAMES: Final[dict[str, tuple[str, str]]] = {
    CRAB: ("Crab", "Краб"),
    CRANE: ("Crane", "Журавль"),
    DRAGON: ("Dragon", "Дракон"),
    LION: ("Lion", "Лев"),
    PHOENIX: ("Phoenix", "Феникс"),
    SCORPION: ("Scorpion", "Скорпион"),
    SHADOWLANDS: ("Shadowlands", "Теневые Земли"),
    UNICORN: ("Unicorn", "Единорог"),
}


def is_clan(value: object) -> bool:
    return isinstance(value, str) and value in CLAN_NAMES
