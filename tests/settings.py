"""The settings pytest runs with: the site's own (``sl5r/settings.py``), one thing changed.

Django's production hasher (PBKDF2, a million iterations) takes over half a second a
password on a two-core machine, and the tests make an account in almost every test (the
judge of ``make_game``). Django's documentation ("Speeding up the tests") recommends a fast
hasher for tests; what a password is stored as is no behaviour the tests check. Servers and
workers that tests start as subprocesses name ``sl5r.settings`` themselves and hash as
production does.
"""

from sl5r.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
