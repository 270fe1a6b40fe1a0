"""Annotation workflow over the store: the pool to judge, progress, can't-judge, the blocking list."""
