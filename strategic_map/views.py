from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from strategic_map.selectors import map_detail


@require_safe
def map_page(request: HttpRequest, slug: str) -> HttpResponse:
    """One map: its provinces (home clan, castle) and its borders."""
    detail = map_detail(slug=slug)
    if detail is None:
        raise Http404(_("There is no map “%(slug)s”.") % {"slug": slug})
    return render(request, "strategic_map/map_detail.html", {"map": detail})
