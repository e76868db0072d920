"""``manage.py venue``: what ``make venue`` runs, on the judge's laptop at a venue.

Everything ``make run`` does (migrate, the bundled map and the demo tournament), then the
static files for a server with ``DEBUG`` off, then the site served for the venue's network
(sl5r/venue.py: every address of this machine, one base address for every link that leaves
the site, a secret key kept in ``VENUE_DIR``), over HTTPS when ``TLS_CERT`` and ``TLS_KEY``
are given. It prints the addresses a judge needs, with a QR code of the public address.

Settings are read before any command runs, so venue mode is switched on by the environment
(``SL5R_VENUE=1``, set by ``make venue``), not by an option of this command.
"""

from __future__ import annotations

import io
from typing import Any

import segno
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse
from django.utils import timezone

from referees.management.commands.serve import site_serve
from referees.models import Tournament
from referees.services import venue_site_changed
from referees.venue.backups import backup_directory, backup_write
from sl5r.public_url import site_url_current
from sl5r.venue import LAST_SITE_FILE


class Command(BaseCommand):
    help = (
        "Serve the venue: migrate, load the map and the demo, then serve every address of "
        "this machine for the phones on its network (run it as `make venue`)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-demo", action="store_true", help="do not load the demo tournament"
        )
        parser.add_argument(
            "--no-qr", action="store_true", help="do not draw the QR code in the terminal"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.SL5R_VENUE:
            raise CommandError(
                "venue mode is off: start it with `make venue` (or SL5R_VENUE=1 manage.py venue)",
                returncode=2,
            )
        # The address a judge chose on a console (kept in the venue folder), else the picked.
        site = site_url_current()
        call_command("migrate", interactive=False, verbosity=0)
        # DEBUG is off, so the pages use the hashed, compressed files collectstatic writes.
        call_command("collectstatic", interactive=False, verbosity=0)
        # The demo only on a first start: never beside a real (or restored) tournament.
        if Tournament.objects.exists():
            pass
        elif options["no_demo"]:
            call_command("loadmap", verbosity=0)
        else:
            call_command("loaddemo", base_url=site, stdout=self.stdout)
        # A backup from the first minute, and one of the state a restore left.
        backup_write(reason="venue_start", if_changed=True)
        host: str = settings.SL5R_VENUE_HOST
        port: int = settings.SL5R_VENUE_PORT

        def ready(clock_note: str) -> None:
            self._banner(site=site, clock_note=clock_note, qr=not options["no_qr"])

        site_serve(
            host=host,
            port=port,
            clock_wanted=True,
            tls=settings.SL5R_TLS,
            on_ready=ready,
            verbosity=options["verbosity"],
        )

    def _site_remember(self, site: str) -> str:
        """The base address of the last start (empty on the first), and keep this one."""
        path = settings.SL5R_VENUE_DIR / LAST_SITE_FILE
        try:
            previous = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            previous = ""
        if previous != site:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(site + "\n", encoding="utf-8")
        return previous

    def _banner(self, *, site: str, clock_note: str, qr: bool) -> None:
        write = self.stdout.write
        scheme = "HTTPS" if settings.SL5R_TLS else "plain HTTP"
        write("")
        write(f"SL5R Referee is serving the venue at {site}/ ({scheme}; {clock_note}).")
        if settings.SL5R_VENUE_WARNING:
            write(self.style.WARNING(f"Warning: {settings.SL5R_VENUE_WARNING}"))
        previous = self._site_remember(site)
        if previous and previous != site:
            # The consoles say it too: a judge who never reads this terminal prints again.
            venue_site_changed(before=previous, after=site, now=timezone.now())
            old_scheme, new_scheme = previous.split("://", 1)[0], site.split("://", 1)[0]
            # SITE_URL only names the address: it cannot make an HTTPS start answer the
            # old sheets' http:// links (or the reverse), so it is offered only when it can.
            advice = (
                f"print them again, or start with SITE_URL={previous} if this laptop can "
                "still be reached there."
                if old_scheme == new_scheme
                else f"print them again: their {old_scheme}:// links do not reach this "
                f"{new_scheme.upper()} start."
            )
            write(
                self.style.WARNING(
                    f"Warning: the venue address was {previous} at the last start. Join "
                    f"sheets printed then carry it: {advice}"
                )
            )
        others = [c for c in settings.SL5R_SITE_CANDIDATES if c != site]
        if others:
            # A laptop on two networks: the picked address may not be the venue's (issue 31).
            write(
                f"This laptop also has {', '.join(o + '/' for o in others)}: if phones cannot "
                "open the links, choose another address on the judge console (Address on the "
                "links); no restart needed."
            )
            if qr:
                # Each with its code, to try with a phone on the venue's Wi-Fi.
                for other in others:
                    write(f"  {other}/")
                    drawing = io.StringIO()
                    segno.make(f"{other}/", error="m").terminal(out=drawing, compact=True)
                    self.stdout.write(drawing.getvalue(), ending="")
        write("Phones on the same network open these addresses. Keep this laptop awake and")
        write("plugged in: while it sleeps, the turn clock stops.")
        write(f"Judge sign-in:   {site}{reverse('sign_in')}")
        public = f"{site}/"
        running = Tournament.objects.exclude(phase=Tournament.Phase.FINISHED).order_by("-id")
        for tournament in running:
            write(f'Tournament "{tournament.name}" (phase: {tournament.get_phase_display()}):')
            write(f"  Judge console: {site}{reverse('referees:judge', args=[tournament.pk])}")
            screen = f"{site}{reverse('referees:screen', args=[tournament.pk])}"
            write(f"  Big screen:    {screen}")
            sheet = reverse("referees:join_sheet", args=[tournament.pk])
            write(f"  Join sheet:    {site}{sheet}")
            if public == f"{site}/":
                public = screen  # the newest tournament's public page, for spectators
        write(f"Public address:  {public}")
        if qr:
            # Compact: two rows of modules per line, so it fits a laptop's terminal.
            drawing = io.StringIO()
            segno.make(public, error="m").terminal(out=drawing, compact=True)
            self.stdout.write(drawing.getvalue(), ending="")
        backups = backup_directory()
        if backups is not None:
            write(
                "Backups after every turn and judge change, and of every order within 2 s: "
                f"{backups} (newest {settings.SL5R_BACKUP_KEEP}; "
                "VENUE_BACKUP_DIR=... for a USB stick)"
            )
        write("Quit with CONTROL-C.")
        self.stdout.flush()
