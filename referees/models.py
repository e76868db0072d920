"""Tournaments, players and the clock come here; no models yet."""
