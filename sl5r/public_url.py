"""The absolute address of a page, as it leaves the site (join links, QR codes, the screen).

With ``SL5R_SITE_URL`` set (``SITE_URL``, or the venue address under ``make venue``) every
such link is built on it, so a sheet printed by a judge who browses through 127.0.0.1
still works on a phone. Without it, on the address the request came in by.
"""

from __future__ import annotations

import segno
from django.conf import settings
from django.http import HttpRequest
from django.utils.safestring import SafeString, mark_safe

# With a viewBox and no fixed size, the page's CSS sets the code's size.
QR_SCALE = 3


def public_url(request: HttpRequest, path: str) -> str:
    """``path`` (absolute, from ``reverse``) as a full URL a phone on the network can open."""
    base: str = settings.SL5R_SITE_URL
    if base:
        return f"{base.rstrip('/')}{path}"
    return request.build_absolute_uri(path)


def qr_svg(url: str) -> SafeString:
    """``url`` as an inline SVG QR code (medium error correction: a smudged print scans)."""
    # segno writes the SVG itself: markup from a library, not from user input.
    return mark_safe(segno.make(url, error="m").svg_inline(scale=QR_SCALE, omitsize=True))
