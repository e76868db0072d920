"""Judge console and public display views (none yet)."""
