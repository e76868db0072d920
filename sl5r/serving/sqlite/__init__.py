"""SQLite for the embedded setup: Django's backend with writers queued in the process."""
