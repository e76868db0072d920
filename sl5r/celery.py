"""The Celery app: ``celery -A sl5r.celery worker`` / ``celery -A sl5r.celery beat``.

Tasks are thin: they take ids and call a service (the same services the in-process clock and
the judge's buttons call). Nothing here reads Django settings at import time:
``config_from_object`` is lazy, and ``autodiscover_tasks`` waits until the apps are loaded.

A worker started without ``--concurrency`` (deploy/systemd/sl5r-worker.service) runs one
process per core, at least two, as ``make cluster``'s does (``sl5r.cluster``): each resolves
one tournament at a time, so a league on one deadline is resolved on every core. Celery's
own default, the cores alone, would leave a one-core machine a single process, in which a
tick waiting for a tournament's lock holds up every other tournament's.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

from sl5r.cores import worker_concurrency_default

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")

app = Celery("sl5r")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _worker_concurrency_default(sender: Celery, **_: Any) -> None:
    # Only where nothing chose: a CELERY_WORKER_CONCURRENCY setting, or --concurrency on the
    # command line (read after this), wins.
    if sender.conf.worker_concurrency is None:
        sender.conf.worker_concurrency = worker_concurrency_default()
