"""The contract between layers: observation, evaluation protocol, reason codes, result models.

Everything here is a validated pydantic model or a constant; nothing reads a file,
touches the store or computes a metric. Every other layer may import it.
"""
