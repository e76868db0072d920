"""The in-process turn clock: a thread that calls the clock services when deadlines pass.

``settings.SL5R_CLOCK = "inprocess"`` (the embedded default) runs ``InProcessClock`` inside
the web server (``manage.py serve``) or on its own (``manage.py runclock``); with
``"celery"`` the tasks of ``referees.tasks`` do its work instead. When a deadline is due,
and why a running turn waits a moment past it, is ``referees.kernel.deadlines``'.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from referees import services
from referees.kernel.deadlines import CELERY, INPROCESS
from sl5r.serving.interface import DATABASE_OUTAGE_ERRORS, database_error_summary

__all__ = ["CELERY", "INPROCESS", "InProcessClock", "clock_sweep_now"]

log = logging.getLogger(__name__)


def clock_sweep_now() -> int:
    """Sweep once: tick every tournament whose deadline has passed, each at the time its
    tournament is locked."""
    return services.clock_sweep()


class InProcessClock:
    """A daemon thread that sweeps for due tournaments every ``interval`` seconds.

    A failed sweep is logged and the loop goes on; the next sweep tries again. Database
    connections are closed around every sweep, as Django does around a request, so a
    connection the server dropped is not reused and none is held open between sweeps.
    """

    def __init__(
        self,
        *,
        interval: float | None = None,
        sweep: Callable[[], int] = clock_sweep_now,
        name: str = "sl5r-clock",
    ) -> None:
        self.interval = float(settings.SL5R_CLOCK_INTERVAL if interval is None else interval)
        if self.interval <= 0:
            raise ValueError("the clock's interval must be positive")
        self.sweep = sweep
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sweeps = 0
        self.failures = 0
        self.database_down = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> InProcessClock:
        """Start the thread; returns the clock, so ``clock = InProcessClock().start()``."""
        if self.running:
            raise RuntimeError("the clock is already running")
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> bool:
        """Ask the loop to stop and wait for it; True when the thread has ended.

        A sweep in progress is finished first (its transaction is never cut short).
        """
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def run(self) -> None:
        """The loop itself, in the calling thread, until ``stop()``."""
        log.info("turn clock started: sweeping every %s s", self.interval)
        try:
            while not self._stop.is_set():
                self.sweep_once()
                self._stop.wait(self.interval)
        finally:
            # This thread's connections end with it.
            connections.close_all()
            log.info("turn clock stopped")

    def sweep_once(self) -> int:
        """One sweep; returns the number of steps taken (0 after a logged failure)."""
        close_old_connections_quietly()
        try:
            done = self.sweep()
        except DATABASE_OUTAGE_ERRORS as error:
            # Said once per outage, in one line: a traceback every sweep buried the log
            # while the database restarted, and told nothing the first line does not.
            self.failures += 1
            if not self.database_down:
                log.warning(
                    "the turn clock cannot reach the database (%s); trying every %s s",
                    database_error_summary(error),
                    self.interval,
                )
            self.database_down = True
            return 0
        except Exception:
            self.failures += 1
            log.exception("the turn clock's sweep failed; trying again in %s s", self.interval)
            return 0
        finally:
            self.sweeps += 1
            close_old_connections_quietly()
        if self.database_down:
            self.database_down = False
            log.warning("the turn clock reaches the database again")
        if done:
            log.info("turn clock: %d step(s) taken at %s", done, _stamp(timezone.now()))
        return done


def close_old_connections_quietly() -> None:
    """``close_old_connections()``, never raising: a broken connection is dropped anyway."""
    try:
        close_old_connections()
    except DATABASE_OUTAGE_ERRORS as error:
        log.debug("could not close a database connection (%s)", database_error_summary(error))
    except Exception:
        log.warning("could not close a database connection", exc_info=True)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
