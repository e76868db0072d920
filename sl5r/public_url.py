"""The absolute address of a page, as it leaves the site (join links, QR codes, the screen).

With ``SL5R_SITE_URL`` set (``SITE_URL``, or the venue address under ``make venue``) every
such link is built on it, so a sheet printed by a judge who browses through 127.0.0.1
still works on a phone. Without it, on the address the request came in by. At a venue a
judge may choose another of the laptop's addresses on the console (a laptop on two
networks picked the wrong one): ``site_url_current`` reads that choice, kept in the venue
folder, without a restart.
"""

from __future__ import annotations

import os
from pathlib import Path

import segno
from django.conf import settings
from django.http import HttpRequest
from django.utils.safestring import SafeString, mark_safe

# In the venue folder: the address a judge chose on the console among the laptop's (kept
# until changed, and used while the laptop still has it).
CHOSEN_SITE_FILE = "site_chosen"

# With a viewBox and no fixed size, the page's CSS sets the code's size.
QR_SCALE = 3


def site_url_current() -> str:
    """The base address links carry now: the judge's choice among the laptop's addresses
    when there is one, else ``SL5R_SITE_URL`` (empty: the request's own address)."""
    chosen = _chosen_file()
    if chosen is not None:
        try:
            text = chosen.read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        if text in settings.SL5R_SITE_CANDIDATES:
            return text
    return str(settings.SL5R_SITE_URL)


def site_url_choose(site: str) -> str:
    """Keep ``site`` (one of ``SL5R_SITE_CANDIDATES``) as the address links carry; the one
    before. Written to a temporary file and renamed: a crash keeps one or the other."""
    chosen = _chosen_file()
    if chosen is None or site not in settings.SL5R_SITE_CANDIDATES:
        raise ValueError(site)
    before = site_url_current()
    chosen.parent.mkdir(parents=True, exist_ok=True)
    temporary = chosen.with_name(f".{chosen.name}.{os.getpid()}.tmp")
    temporary.write_text(site + "\n", encoding="utf-8")
    os.replace(temporary, chosen)
    return before


def _chosen_file() -> Path | None:
    if not settings.SL5R_VENUE:
        return None
    return Path(settings.SL5R_VENUE_DIR) / CHOSEN_SITE_FILE


def public_url(request: HttpRequest, path: str) -> str:
    """``path`` (absolute, from ``reverse``) as a full URL a phone on the network can open."""
    base = site_url_current()
    if base:
        return f"{base.rstrip('/')}{path}"
    return request.build_absolute_uri(path)


def qr_svg(url: str) -> SafeString:
    """``url`` as an inline SVG QR code (medium error correction: a smudged print scans)."""
    # segno writes the SVG itself: markup from a library, not from user input.
    return mark_safe(segno.make(url, error="m").svg_inline(scale=QR_SCALE, omitsize=True))
