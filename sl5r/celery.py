"""The Celery app: ``celery -A sl5r.celery worker`` / ``celery -A sl5r.celery beat``.

Tasks are thin: they take ids and call a service (the same services the in-process clock and
the judge's buttons call). Nothing here reads Django settings at import time:
``config_from_object`` is lazy, and ``autodiscover_tasks`` waits until the apps are loaded.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")

app = Celery("sl5r")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
