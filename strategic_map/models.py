from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Map(models.Model):
    """A map a tournament can be played on.

    ``data`` holds the map JSON exactly as accepted by ``sl5r.rules.mapgraph.map_from_dict``
    (provinces, borders, drawing hints); rows are written only by
    ``strategic_map.services.map_import``, which validates it first.
    """

    slug = models.SlugField(_("slug"), max_length=64, unique=True)
    name = models.CharField(_("name"), max_length=200)
    data = models.JSONField(_("map data"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("map")
        verbose_name_plural = _("maps")
        ordering = ["name", "slug"]

    def __str__(self) -> str:
        return self.name
