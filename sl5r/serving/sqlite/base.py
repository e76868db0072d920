"""Django's SQLite backend, with the write transactions of one process queued on a lock.

SQLite lets one writer in at a time. When 48 Generals send orders in the same second,
the others wait in SQLite's busy handler, which sleeps between retries (1 ms growing to
100 ms) and leaves the database idle while they sleep. Queuing the writers of the process
on a lock hands the database from one to the next at once. Another process (a Celery
worker, ``runclock``) still meets SQLite's own locking, and a lock that is not free within
the busy timeout is given up on, so nothing can wait here for ever.
"""

from __future__ import annotations

import threading
from typing import Any

from django.db.backends.sqlite3 import base

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _write_lock(name: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(name, threading.Lock())


class DatabaseWrapper(base.DatabaseWrapper):
    # The hooks wrapped below are private to Django's backends and django-stubs declares
    # none of them: hence the ignores on their super() calls.
    _holds_write_lock = False

    def _lock(self) -> threading.Lock:
        return _write_lock(str(self.settings_dict["NAME"]))

    def _start_transaction_under_autocommit(self) -> None:
        timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 20))
        self._holds_write_lock = self._lock().acquire(timeout=timeout)
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]
        except BaseException:
            self._release_write_lock()
            raise

    def _release_write_lock(self) -> None:
        if self._holds_write_lock:
            self._holds_write_lock = False
            self._lock().release()

    def _commit(self) -> Any:
        try:
            return super()._commit()  # type: ignore[misc]
        finally:
            self._release_write_lock()

    def _rollback(self) -> Any:
        try:
            return super()._rollback()  # type: ignore[misc]
        finally:
            self._release_write_lock()

    def _close(self) -> Any:
        try:
            return super()._close()  # type: ignore[misc]
        finally:
            self._release_write_lock()
