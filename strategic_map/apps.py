from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class StrategicMapConfig(AppConfig):
    name = "strategic_map"
    verbose_name = _("Strategic map")
    default_auto_field = "django.db.models.BigAutoField"
