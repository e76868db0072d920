"""The games played at a battle table (R8, R13, R14), as pure functions over JSON states.

``game_for(name)`` gives the game; its methods take a state dict and return a new one. The
web layer stores the state in a JSONField and passes it back; see docs/battles.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .base import (
    BattleGame,
    Casualty,
    Entrant,
    GameError,
    TableOutcome,
    battle_casualties,
)
from .bushido import BushidoGame
from .l5r import L5RGame

GAMES: Mapping[str, BattleGame] = MappingProxyType({"l5r": L5RGame(), "bushido": BushidoGame()})


def game_for(name: str) -> BattleGame:
    """The battle game called ``name``: ``"l5r"`` or ``"bushido"``."""
    game = GAMES.get(name) if isinstance(name, str) else None
    if game is None:
        raise GameError("game", f'unknown battle game "{name}"')
    return game


__all__ = [
    "GAMES",
    "BattleGame",
    "BushidoGame",
    "Casualty",
    "Entrant",
    "GameError",
    "L5RGame",
    "TableOutcome",
    "battle_casualties",
    "game_for",
]
