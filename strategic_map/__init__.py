"""The campaign state: maps, and later provinces, armies, turns, orders, control and scores."""
