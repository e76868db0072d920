"""Admin for the referees' models (none yet)."""
