"""Fields of TREC lines found and decoded in a block of bytes with numpy.

No Python object is made per line: a block of whole lines becomes the byte
positions of its fields, each field's bytes packed into little-endian 64-bit
words (zero-padded; a field never holds a NUL: the reader decodes such a file
first), the distinct values of a field with few distinct values (queries,
gains, tags) as ``str``, and scores as float64 equal to Python's ``float()``.

A block these functions cannot split or a score they cannot read exactly raises
:class:`Decline`; the reader (:mod:`evalcore.io.trec`) then walks that block line
by line, which names every bad line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

NEWLINE = 0x0A
#: Zero bytes after a block: a word read at any field's start stays inside the buffer.
PAD = 8
#: ``MASKS[n]`` keeps the first ``n`` bytes of a little-endian word.
MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Scores of at most this many digits, without exponent, are parsed in bulk: the integer
#: of their digits is exact in a float64 and so is the power of ten it is divided by, so
#: the quotient is the correctly rounded value ``float()`` gives (Clinger's fast path).
FAST_DIGITS = 15
_POW10_INT = 10 ** np.arange(FAST_DIGITS + 1, dtype=np.int64)
_POW10 = _POW10_INT.astype(np.float64)
#: Bytes a score the reader accepts may hold (``float()`` also takes ``_``, letters of
#: inf/nan and non-ASCII digits, which the reader refuses: such a block is looked at token
#: by token).
_SCORE_BYTES = frozenset(b"0123456789+-.eE")
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_K = np.uint64(0x9E3779B97F4A7C15)


class Decline(Exception):
    """The block (or a table) is not plain: it needs the line-by-line reading."""


@dataclass
class Block:
    """A block of whole lines, each with exactly ``width`` fields: ``bounds`` holds every
    field's end (a separator or the line end), line by line; ``firsts`` each line's start."""

    data: np.ndarray  # uint8, the block followed by PAD zero bytes
    bounds: np.ndarray
    firsts: np.ndarray
    width: int
    skipped: bool = False  # empty lines were skipped (rows are not on consecutive lines)

    @property
    def lines(self) -> int:
        return len(self.firsts)

    def field(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Field ``j``'s start and end on every line."""
        ends = self.bounds[j :: self.width]
        return (self.firsts if j == 0 else self.bounds[j - 1 :: self.width] + 1), ends

    def words(self, j: int) -> np.ndarray:
        """Field ``j``'s bytes as ``(lines, n)`` little-endian uint64 words, zero-padded."""
        return field_words(self.data, *self.field(j))


def padded(chunk: bytes) -> np.ndarray:
    """``chunk`` as :func:`split_block` takes it: LF-ended (one added when missing), then PAD
    zero bytes."""
    if not chunk.endswith(b"\n"):
        chunk += b"\n"
    data = np.zeros(len(chunk) + PAD, dtype=np.uint8)
    data[: len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
    return data


def split_block(data: np.ndarray, width: int, *, plain: bool = False) -> Block:
    """The fields of a block of whole LF-ended lines (``data``: the block, then PAD zero
    bytes) separated by single spaces, or (``plain``) single spaces or single tabs; or
    decline when a line does not hold exactly ``width`` fields or a field is empty (two
    separators, one at a line's start or end). Empty lines are skipped. ``plain``: also
    decline any other byte up to 0x20 (another blank or separator) and a line starting
    with ``#`` (a comment)."""
    a = data[:-PAD]
    low = a <= 0x20  # separators and line ends (and other blanks: looked at below)
    bounds = np.flatnonzero(low)
    found = a[bounds]
    is_end = found == NEWLINE
    first_sep = int(np.argmax(~is_end)) if found.size and found[0] == NEWLINE else 0
    sep = 0x09 if plain and found.size and found[first_sep] == 0x09 else 0x20
    # Every bound is a line end or the separator (counted: no compressed copy of the seps).
    if np.count_nonzero(found == sep) + np.count_nonzero(is_end) != len(found):
        if plain:
            raise Decline("another blank or separator")
        bounds = np.flatnonzero((a == NEWLINE) | (a == sep))
        is_end = a[bounds] == NEWLINE
    del found
    # Two bounds side by side: an empty field unless both are line ends (an empty line).
    touching = None
    if a[0] == sep or np.logical_and(low[:-1], low[1:]).any():
        touching = np.flatnonzero(np.diff(bounds) == 1)
        if a[0] == sep or not (is_end[touching] & is_end[touching + 1]).all():
            raise Decline("empty field")
    del low
    skipped = bool(a[0] == NEWLINE or (touching is not None and touching.size))
    if skipped:  # empty lines: drop their line ends
        kept = np.ones(len(bounds), dtype=bool)
        if touching is not None:
            kept[touching + 1] = False
        kept[0] = a[0] != NEWLINE
        bounds, is_end = bounds[kept], is_end[kept]
    # Every width-th bound ends a line and no other one does (else a line of too few
    # fields and one of too many would pass as two lines of ``width``).
    lines = len(bounds) // width
    line_ends = bounds[width - 1 :: width]
    if (
        not lines
        or len(bounds) != lines * width
        or not is_end[width - 1 :: width].all()
        or np.count_nonzero(is_end) != lines
    ):
        raise Decline(f"not {width} fields per line")
    del is_end
    # A line starts after the previous line's end and any empty lines after it.
    if skipped:
        firsts = _line_starts(a, bounds[0::width])
    else:
        firsts = np.empty(lines, dtype=bounds.dtype)
        firsts[0] = 0
        np.add(line_ends[:-1], 1, out=firsts[1:])
    if plain and (a[firsts] == 0x23).any():
        raise Decline("comment line")
    return Block(data, bounds, firsts, width, skipped)


def _line_starts(a: np.ndarray, first_ends: np.ndarray) -> np.ndarray:
    """Where each line starts (after the last line end before its first field's end), for
    blocks with empty lines (rare: one pass over the line ends)."""
    line_ends = np.flatnonzero(a == NEWLINE)
    before = np.searchsorted(line_ends, first_ends) - 1
    return np.where(before >= 0, line_ends[np.maximum(before, 0)] + 1, 0)


def field_words(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The bytes ``data[starts[i]:ends[i]]`` of every i as rows of uint64 words."""
    length = ends - starts
    n_words = max((int(length.max(initial=0)) + 7) // 8, 1)
    # Every byte offset of ``data`` read as a (possibly unaligned) little-endian word.
    at = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    first = at[starts]
    first &= MASKS[np.minimum(length, 8)]  # (a field is never empty)
    if n_words == 1:
        return first[:, None]
    out = np.empty((len(starts), n_words), dtype="<u8")  # in memory: the bytes in order
    out[:, 0] = first
    last = len(at) - 1
    for i in range(1, n_words):
        kept = np.clip(length - 8 * i, 0, 8)
        out[:, i] = at[np.minimum(starts + 8 * i, last)] & MASKS[kept]
    return out


def pad_words(words: np.ndarray, n_words: int) -> np.ndarray:
    if words.shape[1] == n_words:
        return words
    out = np.zeros((len(words), n_words), dtype=words.dtype)
    out[:, : words.shape[1]] = words
    return out


def concat_words(parts: list[np.ndarray]) -> np.ndarray:
    """Word rows of several blocks (each padded to the widest)."""
    n_words = max((p.shape[1] for p in parts), default=1)
    return (
        np.concatenate([pad_words(p, n_words) for p in parts])
        if parts
        else np.zeros((0, 1), dtype="<u8")
    )


def rows_equal(x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether word row ``x[a[i]]`` equals ``y[b[i]]``, for every i (both as wide), compared
    word column by word column: no gathered copy of whole rows."""
    equal = x[a, 0] == y[b, 0]
    for i in range(1, x.shape[1]):
        equal &= x[a, i] == y[b, i]
    return equal


def hash_rows(words: np.ndarray, seed: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of every row (and of ``seed``, e.g. a query code): equal rows hash
    equal; unequal rows rarely do (callers check equal hashes exactly)."""
    h = np.zeros(len(words), dtype=np.uint64) if seed is None else seed.astype(np.uint64) * _K
    for i in range(words.shape[1]):
        h ^= words[:, i]
        _mix(h)
    return h


def _mix(x: np.ndarray) -> None:
    """splitmix64's finaliser (wrapping uint64 arithmetic), in place."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)


def as_strings(words: np.ndarray) -> list[str]:
    """Word rows back to their text (UTF-8, validated before; a field holds no NUL, so the
    rows are decoded in bulk, not row by row: ASCII as UCS-4 rows, else as one text joined
    and split at NULs)."""
    if not len(words):
        return []
    data = np.ascontiguousarray(words)
    width = 8 * words.shape[1]
    if data.view(np.uint8).max() < 0x80:  # ASCII: a byte is a code point (UCS-4 rows)
        return data.view(np.uint8).astype(np.uint32).view(f"U{width}").ravel().tolist()
    raw = data.view(f"S{width}").ravel().tolist()
    return b"\0".join(raw).decode("utf-8").split("\0")


def distinct(words: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes of a field's rows (int64, numbered in order of first appearance) and its
    distinct values. Made for fields whose equal values mostly sit on consecutive lines
    (queries, gains, tags): only the first row of each stretch is looked at -- compared
    with each of :data:`FEW` values, else hashed (sorted when they are at most
    :data:`SORTED_HEADS`, else into a hash table: the run of a shuffled file)."""
    n = len(words)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    if words.shape[1] == 1:
        change = words[1:, 0] != words[:-1, 0]
    else:
        change = np.any(words[1:] != words[:-1], axis=1)
    starts = np.flatnonzero(np.concatenate(([True], change)))
    stretches = 2 * len(starts) < n  # else every row is looked at (no gather and repeat)
    heads = words[starts] if stretches else words
    found = _few_values(heads[:, 0]) if words.shape[1] == 1 else None
    code, values = found if found is not None else _many_values(heads)
    if not stretches:
        return code, values
    return np.repeat(code, np.diff(np.append(starts, n))), values


#: Up to this many distinct one-word values (gains, tags) are found by one comparison each.
FEW = 16
#: Up to this many rows, :func:`_many_values` sorts their hashes; past it a hash table is
#: cheaper (the two cost about the same near this size).
SORTED_HEADS = 1 << 16


def _many_values(rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes (first-appearance order) and distinct values of word rows: their hashes sorted
    (up to :data:`SORTED_HEADS` rows, and no two unequal rows hashing alike), else through
    the hash table, which compares equal hashes word by word."""
    if len(rows) <= SORTED_HEADS:
        uniq, first, inverse = np.unique(hash_rows(rows), return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if (rows == rows[first[inverse]]).all():
            rank = np.argsort(first, kind="stable")
            code = np.empty(len(uniq), dtype=np.int64)
            code[rank] = np.arange(len(uniq), dtype=np.int64)
            return code[inverse], as_strings(rows[first[rank]])
    n = len(rows)
    held = RowIndex(hash_rows(rows), lambda a, b: rows_equal(rows, a, rows, b)).first
    first = np.full(n, n, dtype=np.int64)  # per held row: the first row equal to it
    np.minimum.at(first, held, np.arange(n, dtype=np.int64))
    first = first[held]
    is_first = first == np.arange(n)
    numbered = np.cumsum(is_first) - 1  # the n-th distinct value, in order of first appearance
    return numbered[first].astype(np.int64), as_strings(rows[is_first])


def _few_values(column: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """Codes and values of a one-word field with at most :data:`FEW` distinct values
    (first-appearance order), or None when it has more."""
    codes = np.full(len(column), -1, dtype=np.int64)
    values = []
    first = 0
    while first < len(column):
        if len(values) == FEW:
            return None
        codes[column == column[first]] = len(values)
        values.append(column[first : first + 1])
        left = codes[first:] < 0
        first += int(np.argmax(left)) if left.any() else len(left)
    return codes, as_strings(np.stack(values))


def parse_scores(block: Block, j: int) -> np.ndarray:
    """Field ``j`` as float64, equal to ``float()`` of each; decline anything the careful
    reader refuses (not finite, not a plain ASCII number).

    Byte column by byte column (a field's i-th bytes), Horner's rule on the digits."""
    starts, ends = block.field(j)
    n = len(starts)
    width = int((ends - starts).max(initial=0))
    words = field_words(block.data, starts, ends)
    columns = np.ascontiguousarray(words.view(np.uint8).reshape(n, -1)[:, :width].T)
    mantissa = np.zeros(n, dtype=np.int64)
    n_digits = np.zeros(n, dtype=np.int64)
    fraction = np.zeros(n, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int64)
    first = columns[0]
    bad = np.zeros(n, dtype=bool)
    for i, c in enumerate(columns):
        digit = c - np.uint8(48)
        is_digit = digit < 10
        is_dot = c == 0x2E
        plain = is_digit | is_dot | (c == 0)  # zero: the padding after the field
        if i == 0:
            plain |= (c == 0x2D) | (c == 0x2B)  # a sign may open the field
        bad |= ~plain
        np.add(mantissa * 10, digit, out=mantissa, where=is_digit)
        n_digits += is_digit
        fraction += is_digit & (dots > 0)
        dots += is_dot
    fast = ~bad & (dots <= 1) & (n_digits >= 1) & (n_digits <= FAST_DIGITS)
    scores = mantissa / _POW10[np.minimum(fraction, FAST_DIGITS)]
    np.negative(scores, out=scores, where=first == 0x2D)
    slow = np.flatnonzero(~fast)
    if slow.size:
        raw = block.data.tobytes()
        for i in slow.tolist():
            token = raw[starts[i] : ends[i]]
            if not _SCORE_BYTES.issuperset(token):
                raise Decline("score")
            try:
                scores[i] = float(token)
            except ValueError:
                raise Decline("score") from None
        if not np.isfinite(scores[slow]).all():
            raise Decline("score not finite")
    return scores


#: :meth:`RowIndex.find` looks rows up this many at a time.
FIND_ROWS = 1 << 18


class RowIndex:
    """A hash table of rows, built and probed in bulk (open addressing, linear probing:
    every round moves all rows still looking one slot on). Rows are known by number;
    ``same(new, old)`` says exactly which pairs of rows with equal hashes are equal."""

    def __init__(self, hashes: np.ndarray, same: Callable[[np.ndarray, np.ndarray], np.ndarray]):
        bits = max(4, (4 * len(hashes)).bit_length())  # at most a quarter full
        self._shift = np.uint64(64 - bits)
        self._mask = (1 << bits) - 1
        rows = np.int32 if len(hashes) < 2**31 and bits < 31 else np.int64
        self._table = np.full(1 << bits, -1, dtype=rows)
        self._hashes = hashes
        #: For every row, the row equal to it that the table holds (itself for that row, and
        #: for every row no other equals); not always the first of them: of equal rows
        #: claiming one slot at once, the one written is held.
        self.first = np.arange(len(hashes), dtype=rows)
        slot = (hashes >> self._shift).astype(rows)
        # Into the empty table every row claims its slot at once; of rows sharing one, the
        # one written keeps it and the others look on like rows meeting a taken slot.
        self._table[slot] = self.first
        pending = np.flatnonzero(self._table[slot] != self.first).astype(rows)
        while pending.size:
            at = slot[pending]
            held = self._table[at]
            free = held < 0
            claim, claim_at = pending[free], at[free]
            self._table[claim_at] = claim
            lost = claim[self._table[claim_at] != claim]  # another row took the slot: look again
            taken, held = pending[~free], held[~free]
            found = self._equal(taken, held, hashes, same)
            self.first[taken[found]] = held[found]
            moving = taken[~found]
            slot[moving] = (slot[moving] + 1) & self._mask
            pending = np.concatenate((lost, moving))

    def find(
        self, hashes: np.ndarray, same: Callable[[np.ndarray, np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """For every new row (its hash in ``hashes``), the indexed row equal to it, or -1.
        Rows are looked up :data:`FIND_ROWS` at a time (their temporaries stay small)."""
        out = np.full(len(hashes), -1, dtype=self._table.dtype)
        if not len(self._hashes):
            return out
        for c in range(0, len(hashes), FIND_ROWS):

            def same_here(a: np.ndarray, b: np.ndarray, c: int = c) -> np.ndarray:
                return same(a + c, b)

            self._find(hashes[c : c + FIND_ROWS], same_here, out[c : c + FIND_ROWS])
        return out

    def _find(
        self,
        hashes: np.ndarray,
        same: Callable[[np.ndarray, np.ndarray], np.ndarray],
        out: np.ndarray,
    ) -> None:
        """:meth:`find` of some rows, written into ``out``."""
        rows = np.int32 if len(hashes) < 2**31 else np.int64
        slot = (hashes >> self._shift).astype(self._table.dtype)
        # The first look, at every row's own slot, over whole columns (no list of rows yet).
        held = self._table[slot]
        taken = held >= 0
        candidates = np.flatnonzero(taken & (hashes == self._hashes[held]))  # (-1: masked)
        found = candidates[same(candidates, held[candidates])]
        out[found] = held[found]
        taken[found] = False
        pending = np.flatnonzero(taken).astype(rows, copy=False)
        slot[pending] = (slot[pending] + 1) & self._mask
        while pending.size:
            held = self._table[slot[pending]]
            hit = held >= 0
            pending, held = pending[hit], held[hit]
            found = self._equal(pending, held, hashes, same)
            out[pending[found]] = held[found]
            pending = pending[~found]
            slot[pending] = (slot[pending] + 1) & self._mask

    def _equal(
        self,
        new: np.ndarray,
        old: np.ndarray,
        hashes: np.ndarray,
        same: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> np.ndarray:
        equal = hashes[new] == self._hashes[old]
        if equal.any():
            candidates = np.flatnonzero(equal)
            equal[candidates] = same(new[candidates], old[candidates])
        return equal
