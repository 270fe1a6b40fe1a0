"""Shared UI helpers: safe text rendering, highlighting, metric chips, the session's store."""
