"""SL5R Referee: the Django project (settings, URLs, ASGI/WSGI entry points, Celery app).

This module is deliberately free of side effects. ``sl5r.rules`` is a pure-Python
package that must import without Django or Celery, and importing a subpackage runs this
file first; the usual ``from .celery import app as celery_app`` would import Celery and,
through Celery's Django fix-up, Django itself. The Celery app is loaded instead by
``referees.apps.RefereesConfig.ready()`` in the web process and by
``celery -A sl5r.celery worker`` in a worker (``-A sl5r`` also finds it).
"""
