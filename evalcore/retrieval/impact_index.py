"""The impact index of a document set: FTS5's BM25, to the last bit, in numpy.

FTS5 evaluates ``bm25()`` for every document that matches any query term. This index
holds, for every token, its postings (document, occurrences in the title, occurrences in
the text) and every document's length, and ranks a query with a few vectorised array
operations per term, the BM25 impact of a token's postings computed once per index.

**Exactly FTS5's results.** Tokens are FTS5's own: every distinct
whitespace-separated chunk of the documents is tokenized by FTS5 with the
protocol's tokenizer (:class:`evalcore.store.lexical_index.Fts5Tokenizer`, on
a private in-memory SQLite, whatever engine holds the store); whitespace is a
separator for ``unicode61``, so a document's tokens are its chunks' tokens in
order. Scores repeat ``fts5Bm25Function`` (SQLite's ``fts5_aux.c``) operation
by operation, in IEEE double arithmetic:

* ``idf = log((N - n + 0.5) / (n + 0.5))``, ``1e-6`` when not positive, where
  ``N`` is the number of documents and ``n`` how many hold the token;
* ``f`` = the column weight added once per occurrence, title occurrences first;
* ``D`` = the document's token count over both columns, ``avgdl`` = all tokens / ``N``;
* per term ``idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)))``,
  summed over the query's terms in query order from ``0.0``; ``k1 = 1.2``, ``b = 0.75``.

A query term that FTS5 reads as several tokens is a phrase: it matches where
its tokens follow each other in one column, ``n`` counting the documents where
it does and ``f`` its occurrences, found in every document's token stream
(kept beside the postings); a term of no token matches nothing. Ties follow the
caller's tie rule (``ties_descending``: ``doc_id`` descending, trec_eval's), the
documents being indexed in ``doc_id`` order.

An execution's arrays are saved to a cache file
(:mod:`evalcore.retrieval.index_cache`), so executing a pin again on an
unchanged corpus maps them instead of building them: loading costs the
document ids and tokens, the postings are paged in from the file as queries
touch them.
"""

import json
import math
import mmap
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import numpy as np

K1 = 1.2
B = 0.75
#: Documents read per step of the build (bounds the memory of chunk lists).
_BATCH = 4096
#: Distinct chunks handed to the tokenizer per call.
_TOKENIZE_BATCH = 50_000

#: Turns strings into their FTS5 tokens, one list per string.
Tokenize = Callable[[Sequence[str]], list[list[str]]]


@dataclass
class ImpactIndex:
    """Postings of every token over the documents ``doc_ids`` (in ``doc_id`` order)."""

    doc_ids: list[str]
    tokens: dict[str, int]
    offsets: np.ndarray  # int64, len(tokens) + 1: token t's postings are offsets[t]:offsets[t+1]
    docs: np.ndarray  # int32 document index of each posting, ascending within a token
    tf_title: np.ndarray  # occurrences in the title
    tf_text: np.ndarray  # occurrences in the text
    lengths: np.ndarray  # int64 token count of each document (both columns)
    # Every document's tokens in order (title, then text): document i's title is
    # stream[stream_offsets[2i]:stream_offsets[2i+1]], its text runs to stream_offsets[2i+2].
    # Read only for a query term of several tokens (a phrase), to find where they follow.
    stream: np.ndarray  # int32 token ids
    stream_offsets: np.ndarray  # int64, 2 * len(doc_ids) + 1
    _impacts: dict[tuple[int, float, float], np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def document_count(self) -> int:
        return len(self.doc_ids)

    # -- building -----------------------------------------------------------------------

    @classmethod
    def build(cls, documents: Iterable[tuple[str, str, str]], tokenize: Tokenize) -> "ImpactIndex":
        """Index ``(doc_id, title, text)`` rows with FTS5's tokens; ``ValueError`` unless the
        rows come in ``doc_id`` order (code point order: the tie rule's), each id once."""
        # A chunk's code is its number of first appearance: a missing key gets the
        # dictionary's length, so coding a column is one map() in C.
        chunk_ids: defaultdict[str, int] = defaultdict()
        chunk_ids.default_factory = chunk_ids.__len__
        code_of = chunk_ids.__getitem__
        doc_ids: list[str] = []
        columns: list[list[np.ndarray]] = [[], []]  # per column: chunk codes, chunks per doc
        counts: list[list[np.ndarray]] = [[], []]
        batch: list[tuple[str, str, str]] = []

        def flush() -> None:
            for col in (0, 1):
                splits = [row[col + 1].split() for row in batch]
                counts[col].append(np.fromiter(map(len, splits), np.int64, len(splits)))
                columns[col].append(np.fromiter(map(code_of, chain.from_iterable(splits)),
                                                np.int64))
            batch.clear()

        for row in documents:
            if doc_ids and not doc_ids[-1] < row[0]:
                raise ValueError(f"documents must come in doc_id order, each once: {row[0]!r} "
                                 f"after {doc_ids[-1]!r}")
            doc_ids.append(row[0])
            batch.append(row)
            if len(batch) >= _BATCH:
                flush()
        flush()

        # FTS5's tokens of every distinct chunk.
        tokens: dict[str, int] = {}
        chunk_tokens: list[int] = []
        chunk_ntok = np.zeros(len(chunk_ids), dtype=np.int64)
        chunks = list(chunk_ids)
        chunk_ids.clear()
        for start in range(0, len(chunks), _TOKENIZE_BATCH):
            part = chunks[start:start + _TOKENIZE_BATCH]
            for i, toks in enumerate(tokenize(part)):
                chunk_ntok[start + i] = len(toks)
                chunk_tokens.extend(tokens.setdefault(t, len(tokens)) for t in toks)
        del chunks
        chunk_start = np.zeros(len(chunk_ntok) + 1, dtype=np.int64)
        np.cumsum(chunk_ntok, out=chunk_start[1:])
        chunk_token_arr = np.asarray(chunk_tokens, dtype=np.int64)

        n = len(doc_ids)
        lengths = np.zeros(n, dtype=np.int64)
        keys: list[np.ndarray] = []
        column_tokens: list[np.ndarray] = []  # per column: token ids in document order
        column_sizes: list[np.ndarray] = []  # per column: each document's token count
        for col in (0, 1):
            codes = np.concatenate(columns[col]) if columns[col] else np.zeros(0, np.int64)
            per_doc = np.concatenate(counts[col]) if counts[col] else np.zeros(0, np.int64)
            columns[col] = []
            ntok = chunk_ntok[codes]
            doc_of_chunk = np.repeat(np.arange(n, dtype=np.int64), per_doc)
            doc_of_token = np.repeat(doc_of_chunk, ntok)
            # Gather the token ids of every chunk occurrence (a CSR gather).
            first = np.repeat(chunk_start[codes] - np.cumsum(ntok) + ntok, ntok)
            token = chunk_token_arr[first + np.arange(len(first), dtype=np.int64)]
            sizes = np.bincount(doc_of_token, minlength=n)
            lengths += sizes
            column_tokens.append(token)
            column_sizes.append(sizes)
            keys.append((token * max(n, 1) + doc_of_token) * 2 + col)
        stream, stream_offsets = _token_stream(column_tokens, column_sizes)
        del column_tokens
        key = np.sort(np.concatenate(keys))
        del keys
        if len(key):
            starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
            run = np.diff(np.append(starts, len(key)))
            cell = key[starts]  # (token, doc, column), each once, sorted
        else:
            run = cell = np.zeros(0, np.int64)
        pair = cell >> 1
        col = cell & 1
        new = np.concatenate(([True], pair[1:] != pair[:-1])) if len(pair) else np.zeros(0, bool)
        posting = np.cumsum(new) - 1
        m = int(new.sum())
        tf = [np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)]
        for c in (0, 1):
            sel = col == c
            tf[c][posting[sel]] = run[sel]
        pairs = pair[new]
        token_of = pairs // max(n, 1)
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(np.bincount(token_of, minlength=len(tokens)), out=offsets[1:])
        tf_dtype = np.uint16 if max((int(t.max()) if len(t) else 0) for t in tf) < 65536 else np.int64
        return cls(
            doc_ids=doc_ids,
            tokens=tokens,
            offsets=offsets,
            docs=(pairs % max(n, 1)).astype(np.int32),
            tf_title=tf[0].astype(tf_dtype),
            tf_text=tf[1].astype(tf_dtype),
            lengths=lengths,
            stream=stream,
            stream_offsets=stream_offsets,
        )

    # -- ranking ------------------------------------------------------------------------

    def rank(
        self, terms: Sequence[Sequence[str]], weights: tuple[float, float], limit: int,
        *, ties_descending: bool = True
    ) -> list[tuple[str, float]]:
        """``(doc_id, score)`` best first, at most ``limit``, for a query whose terms FTS5
        tokenizes into ``terms`` (a term of several tokens is a phrase; one of none
        matches nothing)."""
        n = self.document_count
        scores = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=bool)
        for term in terms:
            if len(term) == 1:
                found = self._token_postings(term[0], weights)
            else:
                found = self._phrase_postings(term, weights)
            if found is None:
                continue  # no document holds it: its term adds 0.0 to every score
            docs, impact = found
            scores[docs] += impact
            matched[docs] = True
        candidates = np.flatnonzero(matched)
        if not candidates.size:
            return []
        cand_scores = scores[candidates]
        if len(candidates) > limit:
            # Every candidate scoring at least the limit-th best score (ties included).
            kth = np.partition(cand_scores, len(cand_scores) - limit)[len(cand_scores) - limit]
            keep = cand_scores >= kth
            candidates, cand_scores = candidates[keep], cand_scores[keep]
        tie = -candidates if ties_descending else candidates
        order = np.lexsort((tie, -cand_scores))[:limit]
        ids = self.doc_ids
        return [(ids[i], s) for i, s in zip(candidates[order].tolist(),
                                             cand_scores[order].tolist(), strict=True)]

    def _token_postings(
        self, token: str, weights: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The documents holding ``token`` and its BM25 term score in each; None: none."""
        t = self.tokens.get(token)
        if t is None:
            return None
        key = (t, weights[0], weights[1])
        impact = self._impacts.get(key)
        lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
        if impact is None:
            impact = self._impacts[key] = self._bm25_terms(
                self.docs[lo:hi], self.tf_title[lo:hi], self.tf_text[lo:hi], weights)
        return self.docs[lo:hi], impact

    def _phrase_postings(
        self, phrase: Sequence[str], weights: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The documents holding the tokens ``phrase`` one right after the other in one
        column, and the phrase's BM25 term score in each (FTS5 counts every position where
        the phrase starts, overlapping ones too); None: none (or an empty phrase)."""
        ids = [self.tokens.get(token) for token in phrase]
        if not ids or any(t is None for t in ids):
            return None
        candidates: np.ndarray | None = None
        for t in ids:
            docs = self.docs[int(self.offsets[t]):int(self.offsets[t + 1])]
            candidates = docs if candidates is None else np.intersect1d(
                candidates, docs, assume_unique=True)
        assert candidates is not None
        if not len(candidates):
            return None
        candidates = candidates.astype(np.int64)
        so = self.stream_offsets
        starts, middles, ends = so[2 * candidates], so[2 * candidates + 1], so[2 * candidates + 2]
        sizes = ends - starts
        owner = np.repeat(np.arange(len(candidates)), sizes)
        position = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(
            int(sizes.sum()), dtype=np.int64)
        in_text = position >= middles[owner]
        column_end = np.where(in_text, ends[owner], middles[owner])
        k = len(ids)
        hit = position + k <= column_end
        last = len(self.stream) - 1
        for j, t in enumerate(ids):
            hit &= self.stream[np.minimum(position + j, last)] == t
        cell = owner[hit] * 2 + in_text[hit]
        counts = np.bincount(cell, minlength=2 * len(candidates)).reshape(-1, 2)
        holding = np.flatnonzero(counts.sum(axis=1))
        if not len(holding):
            return None
        docs = candidates[holding].astype(self.docs.dtype)
        return docs, self._bm25_terms(docs, counts[holding, 0], counts[holding, 1], weights)

    def _bm25_terms(
        self, docs: np.ndarray, tf_title: np.ndarray, tf_text: np.ndarray,
        weights: tuple[float, float]
    ) -> np.ndarray:
        """The BM25 term score in each of ``docs`` of a term they hold ``tf_title`` and
        ``tf_text`` times, ``docs`` being every document that holds it (see the module
        docstring)."""
        n = self.document_count
        hits = len(docs)
        idf = math.log((n - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        avgdl = float(self.lengths.sum()) / float(n)
        tf_title = tf_title.astype(np.int64)
        tf_text = tf_text.astype(np.int64)
        # f: the column weight added once per occurrence, title first (as FTS5 adds it),
        # computed once per distinct (title, text) count pair and looked up per posting.
        width = int(tf_text.max()) + 1
        keys = tf_title * width + tf_text
        cells = (int(tf_title.max()) + 1) * width
        if cells <= 4 * len(keys) + 4096:  # every possible pair fits a small table: no sort
            present = np.zeros(cells, dtype=bool)
            present[keys] = True
            uniq = np.flatnonzero(present)
            slot = np.zeros(cells, dtype=np.intp)
            slot[uniq] = np.arange(len(uniq))
            inverse = slot[keys]
        else:
            uniq, inverse = np.unique(keys, return_inverse=True)
            inverse = inverse.reshape(-1)
        f_values = np.empty(len(uniq), dtype=np.float64)
        for i, k in enumerate(uniq.tolist()):
            f = 0.0
            for _ in range(k // width):
                f += weights[0]
            for _ in range(k % width):
                f += weights[1]
            f_values[i] = f
        f = f_values[inverse]
        d = self.lengths[docs].astype(np.float64)
        return idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))

    # -- persistence ----------------------------------------------------------------------

    def save(self, stream: BinaryIO) -> None:
        """Write the arrays to ``stream`` in the file format :meth:`load` maps (``_MAGIC``, the
        header's length as 8 bytes little-endian, a JSON header naming each array's dtype,
        length and offset, then the arrays, each at an offset that is a multiple of 64)."""
        arrays = {
            "doc_ids": _pack(self.doc_ids),
            "doc_id_ends": _ends(self.doc_ids),
            "tokens": _pack(list(self.tokens)),
            "token_ends": _ends(list(self.tokens)),
        } | {name: getattr(self, name) for name in _POSTINGS}
        arrays = {name: np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
                  for name, a in arrays.items()}
        header: dict[str, list] = {}
        position = _ALIGN * (1 + (len(_MAGIC) + 8 + 64 * (len(arrays) + 1)) // _ALIGN)
        for name, a in arrays.items():
            header[name] = [a.dtype.str, len(a), position]
            position += _ALIGN * (1 + a.nbytes // _ALIGN)
        raw = json.dumps(header).encode("ascii")
        if len(_MAGIC) + 8 + len(raw) > header["doc_ids"][2]:
            raise ValueError("impact index header too long")  # cannot happen: names are short
        stream.write(_MAGIC + len(raw).to_bytes(8, "little") + raw)
        written = len(_MAGIC) + 8 + len(raw)
        for name, a in arrays.items():
            stream.write(b"\0" * (header[name][2] - written))
            stream.write(memoryview(a).cast("B"))
            written = header[name][2] + a.nbytes

    @classmethod
    def load(cls, path: Path) -> "ImpactIndex":
        """Map an index :meth:`save` wrote (the postings are read from the file only when a
        query needs them); ``ValueError`` when the file is not one."""
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if stream.read(len(_MAGIC)) != _MAGIC:
                raise ValueError(f"{path} is not an impact index file")
            length = int.from_bytes(stream.read(8), "little")
            header = json.loads(stream.read(min(length, 1 << 16)).decode("ascii"))
            mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
        data: dict[str, np.ndarray] = {}
        for name in _ARRAYS:
            dtype_str, count, offset = header[name]
            dtype = np.dtype(dtype_str)
            if dtype.kind not in "iu" or count < 0 or offset + count * dtype.itemsize > size:
                raise ValueError(f"{path} is not a whole impact index file ({name})")
            data[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=offset)
        doc_ids = _unpack(data["doc_ids"], data["doc_id_ends"])
        tokens = _unpack(data["tokens"], data["token_ends"])
        postings = {name: data[name] for name in _POSTINGS}
        index = cls(doc_ids=doc_ids, tokens={t: i for i, t in enumerate(tokens)}, **postings)
        m = len(index.docs)
        if (
            len(index.offsets) != len(tokens) + 1
            or int(index.offsets[-1]) != m
            or len(index.tf_title) != m
            or len(index.tf_text) != m
            or len(index.lengths) != len(doc_ids)
            or (m and (int(index.docs.min()) < 0 or int(index.docs.max()) >= len(doc_ids)))
            or len(index.stream_offsets) != 2 * len(doc_ids) + 1
            or int(index.stream_offsets[-1]) != len(index.stream)
            or int(index.lengths.sum()) != len(index.stream)
            or np.any(np.diff(index.stream_offsets) < 0)
            or (len(index.stream) and (int(index.stream.min()) < 0
                                       or int(index.stream.max()) >= len(tokens)))
        ):
            raise ValueError(f"{path} is not a consistent impact index")
        return index


#: The first bytes of an impact index file (the version is in the name).
_MAGIC = b"evalcore-impact-index-3\n"
#: Arrays start at multiples of this many bytes.
_ALIGN = 64
#: The arrays stored as they are (the ids and tokens are stored packed, before them).
_POSTINGS = ("offsets", "docs", "tf_title", "tf_text", "lengths", "stream", "stream_offsets")
_ARRAYS = ("doc_ids", "doc_id_ends", "tokens", "token_ends", *_POSTINGS)


def _token_stream(
    column_tokens: list[np.ndarray], column_sizes: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Every document's tokens, title then text, from each column's tokens in document
    order and each document's token count per column; and where each part starts."""
    n = len(column_sizes[0])
    offsets = np.zeros(2 * n + 1, dtype=np.int64)
    np.cumsum(np.stack(column_sizes, axis=1).reshape(-1), out=offsets[1:])
    stream = np.zeros(int(offsets[-1]), dtype=np.int32)
    for col, (tokens, sizes) in enumerate(zip(column_tokens, column_sizes, strict=True)):
        within = np.arange(len(tokens), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        stream[np.repeat(offsets[col:-1:2], sizes) + within] = tokens
    return stream, offsets


def _pack(strings: list[str]) -> np.ndarray:
    return np.frombuffer("".join(strings).encode("utf-8"), dtype=np.uint8)


def _ends(strings: list[str]) -> np.ndarray:
    return np.cumsum([len(s.encode("utf-8")) for s in strings], dtype=np.int64)


def _unpack(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    """The strings :func:`_pack` joined, cut at their byte ``ends`` (ASCII text, the usual
    case, is decoded once and sliced)."""
    raw = blob.tobytes()
    bounds = ends.tolist()
    if raw.isascii():
        text = raw.decode("ascii")
        return [text[a:b] for a, b in zip([0, *bounds], bounds, strict=False)]  # one longer
    out: list[str] = []
    start = 0
    for end in bounds:
        out.append(raw[start:end].decode("utf-8"))
        start = end
    return out
