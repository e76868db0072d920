"""``manage.py serve [--host 127.0.0.1] [--port 8000] [--no-clock]``: the site in one process.

Daphne serves HTTP and websockets (the ASGI application in ``settings.ASGI_APPLICATION``),
as ``daphne`` on the command line or Daphne's ``runserver`` do, without the autoreloader.
With ``SL5R_CLOCK=inprocess`` (the embedded default) the turn clock runs beside it, in a
daemon thread of the same process; with ``SL5R_CLOCK=celery`` Celery beat and a worker
resolve the turns instead. SIGINT or SIGTERM stops both. ``manage.py venue`` serves through
the same function, over HTTPS when given a certificate.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.module_loading import import_string

from referees.clock_thread import INPROCESS, InProcessClock
from sl5r.serving.interface import arrival_stamps_install, heap_freeze


def _endpoint_escape(text: str) -> str:
    # Twisted's endpoint strings separate fields with ":"; paths and IPv6 addresses escape it.
    return text.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")


def site_serve(
    *,
    host: str,
    port: int,
    clock_wanted: bool,
    tls: tuple[Path, Path] | None = None,
    on_ready: Callable[[str], None],
    verbosity: int = 1,
) -> None:
    """Serve the site until SIGINT or SIGTERM; ``on_ready(clock_note)`` once listening.

    ``tls`` is (certificate, private key): Daphne (Twisted) then serves HTTPS and secure
    websockets on ``port`` instead of plain HTTP.
    """
    # daphne.server installs Twisted's asyncio reactor when imported; the daphne app
    # (first in INSTALLED_APPS) has already imported it, before anything else could.
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server

    if not 0 < port < 65536:
        raise CommandError(f"--port: {port} is not a port number")
    application = import_string(settings.ASGI_APPLICATION)

    clock: InProcessClock | None = None
    if settings.SL5R_CLOCK == INPROCESS and clock_wanted:
        clock = InProcessClock()
        clock_note = f"the turn clock sweeps every {clock.interval:g} s"
    elif settings.SL5R_CLOCK == INPROCESS:
        clock_note = "no turn clock here (--no-clock)"
    else:
        clock_note = "turns are resolved by Celery (SL5R_CLOCK=celery)"

    if tls is None:
        endpoints = build_endpoint_description_strings(host=host, port=port)
    else:
        cert, key = tls
        endpoints = [
            f"ssl:port={port}:interface={_endpoint_escape(host)}"
            f":certKey={_endpoint_escape(str(cert))}:privateKey={_endpoint_escape(str(key))}"
        ]

    def ready() -> None:
        if clock is not None:
            clock.start()
        on_ready(clock_note)

    # R4: an order's arrival is the kernel's stamp of its bytes, not the moment a busy loop
    # got to them (sl5r/serving/arrival.py).
    arrival_stamps_install()
    # Everything loaded so far lives as long as the process: out of the collector's way, so
    # that a full collection during a fan-out walks only the sockets (sl5r/serving/heap.py).
    heap_freeze()
    server = Server(
        application=application,
        endpoints=endpoints,
        signal_handlers=True,
        root_path=getattr(settings, "FORCE_SCRIPT_NAME", None) or "",
        ready_callable=ready,
        verbosity=verbosity,
    )
    try:
        server.run()
    finally:
        if clock is not None and not clock.stop():
            sys.stderr.write("The turn clock did not stop in time.\n")
    if server.abort_start:
        raise CommandError(f"could not listen on {host}:{port}")


class Command(BaseCommand):
    help = (
        "Serve the site with Daphne (HTTP and websockets) and, with SL5R_CLOCK=inprocess, "
        "run the turn clock in the same process."
    )
    requires_migrations_checks = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
        parser.add_argument("--port", type=int, default=8000, help="port to listen on")
        parser.add_argument(
            "--no-clock",
            action="store_true",
            help="do not run the in-process clock (run `manage.py runclock` elsewhere)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host: str = options["host"]
        port: int = options["port"]
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"

        def ready(clock_note: str) -> None:
            self.stdout.write(f"Serving SL5R Referee at {url} ({clock_note}).")
            self.stdout.write("Quit with CONTROL-C.")

        site_serve(
            host=host,
            port=port,
            clock_wanted=not options["no_clock"],
            on_ready=ready,
            verbosity=options["verbosity"],
        )
