"""Tournaments, players and roles, the clock, the judge console, battle tables, the audit log.

Depends on ``strategic_map``, never the other way round.
"""
