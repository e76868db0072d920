"""Battle tables (R7, R8): meetings, votes, the game at the table, results on the map.

This package's face: its public services, re-exported for ``battles.services.X`` callers.
They are defined in ``lifecycle`` (the tables with the turns and the game's end), ``play``
(votes, the start, actions), ``consent`` (proposals answered) and ``results`` (the
winner's choice, a judge's correction); their shared steps are in ``_table``, private to
the package. New code imports a service from its defining module.

Every service here locks the tournament (``referees.kernel.core.tournament_lock``), so a table
changes under the same lock as the board and the clock, writes its line in the tournament's log
(R11) and announces itself after commit (kind ``battle``; the event says nothing more, and
what each viewer may see of a table is decided in ``battles.selectors``).

The table game itself is ``sl5r.rules.games``: pure, handed its state and an action, and a
random source from here. The map's side is ``battles.board``: who stands in the province,
who may not give orders (``in_battle``, R4), who is destroyed and when he may reform (R9),
who controls the province afterwards (R6); this package never reads the board itself.

Decisions (see also docs/api.md, "Battles"):

- A General votes, acts and chooses for his own army only; a judge may do any of it for a
  General (a judge's table action is ``by: "judge"`` unless he names a seated army).
- When a battle ends and armies of several clans are still in the province, a new table
  opens there at once: in ``peace`` when they all fought in the battle (they stopped, or the
  winner let them live), else as a ``meeting`` where the others have not voted yet. Any of
  them may call for battle later (R7).
- A win needs the winner's choice only when an army of another clan than the winner's is
  neither the winner nor a loser; the winner's own clan never fights him, so its armies
  survive.
- Newcomers to a table whose game already has an outcome are not seated: they wait for the
  result, and then meet whoever is left.
- At the end of the game every open table (meeting, peace, battle, decided) is ``stopped``;
  the board is left as it is, so the province keeps its controller (R8).
"""

from __future__ import annotations

from battles.services.consent import battle_proposal_answer
from battles.services.lifecycle import (
    battles_resume,
    battles_stop,
    battles_sync,
    battles_undo,
    battles_undo_problem,
)
from battles.services.play import battle_act, meeting_vote
from battles.services.results import battle_correct, battle_result_choose

__all__ = [
    "battle_act",
    "battle_correct",
    "battle_proposal_answer",
    "battle_result_choose",
    "battles_resume",
    "battles_stop",
    "battles_sync",
    "battles_undo",
    "battles_undo_problem",
    "meeting_vote",
]
