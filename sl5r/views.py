"""Project-level views that belong to no app."""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from sl5r.serving.database_outage import database_error_summary

logger = logging.getLogger(__name__)


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Report ``{"status": "ok"}`` when the database answers a trivial query, else 503."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        # A load balancer probes every few seconds: a line each, not a traceback each.
        logger.warning("healthz: the database did not answer (%s)", database_error_summary(error))
        return JsonResponse({"status": "error", "database": "unavailable"}, status=503)
    return JsonResponse({"status": "ok"})
