"""The gain scale: labels are integers 0..MAX_GAIN (0 = explicitly non-relevant).

The one place the ceiling is written; everything that validates, maps or
ranges over gains reads :data:`MAX_GAIN` from here.
"""

#: The highest graded-relevance label.
MAX_GAIN: int = 4
#: Every gain a label may hold, lowest first.
GAIN_VALUES: tuple[int, ...] = tuple(range(MAX_GAIN + 1))
