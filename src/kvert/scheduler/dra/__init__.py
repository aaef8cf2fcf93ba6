"""DRA (structured parameters) for the scheduler."""
