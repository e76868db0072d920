"""A battle table's draws anyone can check (R11), in the scheme of ``sl5r.rules.draws``.

Each table gets its own secret seed when it opens (``Battle.draw_seed``); everyone at the
table sees its commitment (SHA-256 of the seed) while it is open, and the seed itself once
the table is over. Every step at the table that may draw (the start, a reinforcement, an
action) draws with ``SeededDraws(seed, digest, label)``:

- ``label`` is ``battle:<id>:<step>``, where ``step`` is how many draws the table had
  recorded before this step (so an undone or refused step, played again on the same table,
  draws the same, and two steps that draw never share a label);
- ``digest`` is the SHA-256 of the canonical JSON (sorted keys, no spaces) of
  ``{"move": <the step>, "participants": <the sorted army codes at the table>}``.

The log line of a step that drew carries the label, the participants, the move, the digest
and each draw (its pool and its pick), which is all a player needs to recompute them. The
format is published (docs/adjudication.md, "Battle tables"): changing it breaks the
verification of every table already played.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from battles.models import Battle
from referees.models import LogEntry
from sl5r.rules.draws import SeededDraws, seed_commitment

# The seed is revealed once nothing more can be drawn at the table.
REVEALED_STATUSES = (Battle.Status.ENDED, Battle.Status.DISPERSED, Battle.Status.STOPPED)


def battle_draw_label(*, battle_id: int, step: int) -> str:
    return f"battle:{battle_id}:{step}"


def battle_draw_digest(*, participants: Iterable[str], move: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of the step and the armies at the table."""
    canonical = json.dumps(
        {"move": dict(move), "participants": sorted(participants)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def battle_draw_step(state: Any) -> int:
    """How many draws the table's game state has recorded so far (0 before the game)."""
    draws = state.get("draws") if isinstance(state, Mapping) else None
    return len(draws) if isinstance(draws, list) else 0


class BattleDraws:
    """The random source of one step at a table, and what its log line says about it."""

    def __init__(
        self, battle: Battle, *, state: Any, participants: Iterable[str], move: Mapping[str, Any]
    ) -> None:
        self.step = battle_draw_step(state)
        self.label = battle_draw_label(battle_id=battle.pk, step=self.step)
        self.participants = sorted(participants)
        self.move = dict(move)
        self.digest = battle_draw_digest(participants=self.participants, move=self.move)
        self.rng = SeededDraws(seed=battle.draw_seed, digest=self.digest, label=self.label)

    def record(self, state: Any) -> dict[str, Any] | None:
        """The log's ``draws`` for this step (None when it drew nothing)."""
        made = state.get("draws", [])[self.step :] if isinstance(state, Mapping) else []
        drawn = [d for d in made if isinstance(d, Mapping) and d.get("source") == self.label]
        if not drawn:
            return None
        return {
            "label": self.label,
            "step": self.step,
            "participants": self.participants,
            "move": self.move,
            "digest": self.digest,
            "draws": [{"what": d["what"], "from": d["from"], "result": d["result"]} for d in drawn],
        }


def battle_commitment(battle: Battle) -> str:
    return seed_commitment(battle.draw_seed) if battle.draw_seed else ""


def battle_seed_revealed(battle: Battle) -> str | None:
    """The table's seed once it is over (R11), never before."""
    return (battle.draw_seed or None) if battle.status in REVEALED_STATUSES else None


def battle_draw_steps(battle: Battle) -> list[dict[str, Any]]:
    """The ``draws`` of every log line of ``battle`` that drew, oldest first.

    An undone step keeps its line (the log is append-only): it still checks against the seed.
    """
    lines = LogEntry.objects.filter(
        tournament_id=battle.tournament_id, data__battle=battle.pk, data__has_key="draws"
    ).order_by("id")
    return [dict(line.data["draws"], action=line.action) for line in lines]


def battle_draws_check(*, seed: str, entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` (a log line's ``draws``) follows from ``seed``: every pick recomputed.

    A single pick (``result`` a code) is one draw from its pool; an order (a list) is one
    draw per place but the last, each from the codes not yet placed.
    """
    digest = battle_draw_digest(participants=entry["participants"], move=entry["move"])
    if digest != entry["digest"]:
        return False
    rng = SeededDraws(seed=seed, digest=digest, label=str(entry["label"]))
    for draw in entry["draws"]:
        result = draw["result"]
        if isinstance(result, str):
            if rng.choice(list(draw["from"])) != result:
                return False
            continue
        remaining: list[str] = list(draw["from"])
        order: Sequence[str] = list(result)
        for pick in order[:-1]:
            if rng.choice(remaining) != pick:
                return False
            remaining.remove(pick)
    return True
