"""Request and response shapes of the API (pydantic, through django-ninja), one module per
resource of ``referees.api`` and ``common`` for those several share; the primitives the site's
other APIs use too are ``referees.http.schemas``.

Input is checked here for form only (types, ranges, required fields): whether a request
makes sense in the game is the services' decision, and their refusals carry the reason.
"""
