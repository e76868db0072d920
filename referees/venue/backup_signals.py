"""When a venue writes a backup: the receivers of the kernel's signals.

The kernel does not know the backups (they sit above it, in ``referees.venue``): it sends
``tournament_changed`` once a unit of work has committed, and ``record_changed`` inside the
transaction of a change no watcher hears of (judges' accounts and API keys, join links, a
judge's paper order). ``backups_connect``, called by ``RefereesConfig.ready``, connects the
receivers here, which ask ``referees.venue.backups`` for a backup once the change is
committed, or for one within 2 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referees.kernel.core import record_changed, tournament_changed
from referees.venue.backups import backup_on_commit, backup_soon_on_commit

# The changes backed up once committed: the start, the board, the clock, the tables and the
# judges' announcements. Not a General's order or a Daimyo's instruction, which come up to 48
# a second and go in the frequent backups (``backup_soon_on_commit``); a judge's paper order
# comes through ``record_changed``.
BACKUP_KINDS = frozenset(
    {
        "phase",
        "positions",
        "turn_resolved",
        "turn_undone",
        "correction",
        "clock",
        "battle",
        "announcement",
    }
)


def backup_on_tournament_changed(*, kinds: Sequence[str], **_: Any) -> None:
    """The receiver of the kernel's ``tournament_changed``, sent once a unit of work has
    committed: a backup now for a change a venue must not lose, else one within 2 s."""
    reasons = [kind for kind in kinds if kind in BACKUP_KINDS]
    if reasons:
        backup_on_commit(reason=reasons[-1])
    else:
        # An order, a count at a table: acknowledged, so in a backup within 2 s.
        backup_soon_on_commit()


def backup_on_record_changed(*, reason: str, **_: Any) -> None:
    """The receiver of the kernel's ``record_changed``, sent inside the change's transaction:
    a backup once it commits."""
    backup_on_commit(reason=reason)


def backups_connect() -> None:
    """Listen to the kernel's changes (``RefereesConfig.ready``). Connected after the live
    updates, so a change's event goes out before its backup is written, as when the kernel
    asked for the backup itself."""
    tournament_changed.connect(
        backup_on_tournament_changed,
        dispatch_uid="referees.venue.backup_signals.tournament_changed",
    )
    record_changed.connect(
        backup_on_record_changed, dispatch_uid="referees.venue.backup_signals.record_changed"
    )
