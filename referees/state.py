"""The tournament's state as a viewer may see it: ``GET …/state``, the pages and the events.

It sits above ``battles`` in the stack (architecture.md): the tournament's own view comes
from ``referees.selectors`` (below the battles), and a player's battle table from
``battles.selectors``; this module puts them together.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from battles.selectors import army_current_battle
from referees.checkin import CHECK_IN_PHASES, tournament_checkin
from referees.models import Tournament
from referees.selectors import Viewer, tournament_view
from strategic_map.models import Campaign

# A turn resolved while the state was being read is seen by its version; the state is read
# again a few times at most.
STATE_READS = 3


def tournament_state(*, tournament: Tournament, viewer: Viewer, now: datetime) -> dict[str, Any]:
    """Everything ``viewer`` may see of the tournament now, as plain JSON-ready data.

    The state is read in several queries; a turn resolved meanwhile would mix its clock
    with the old board. The campaign's version is checked again at the end, and the state
    is read anew (a few times at most) when it moved.
    """
    for _ in range(STATE_READS):
        state = tournament_view(tournament=tournament, viewer=viewer, now=now)
        if viewer.kind == "player" and viewer.player is not None:
            army = viewer.player.army
            # The table the player's army sits at now (meeting, peace, battle), if any.
            state["battle"] = army_current_battle(
                tournament=tournament, army_code=army.code if army else None
            )
        current = (
            Campaign.objects.filter(pk=tournament.campaign_id)
            .values_list("version", flat=True)
            .first()
        )
        if current == state["tournament"]["version"]:
            break
        tournament = Tournament.objects.select_related("campaign").get(pk=tournament.pk)
    if viewer.kind == "judge" and tournament.phase in CHECK_IN_PHASES:
        # Issue 32: before the turns, who has opened his join link (or been marked present).
        state["checkin"] = tournament_checkin(tournament=tournament)
    return state
