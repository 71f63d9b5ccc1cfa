"""The words of the Enron foldering stream (:mod:`olboost.datasets.enron`): a text cut into
lower-cased runs of letters, and the messages' words as binary bags over a vocabulary indexed by
first appearance."""

from __future__ import annotations

import functools
import re
import unicodedata

import numpy as np
import scipy.sparse as sp

# Letters: word characters that are neither digits nor '_'.
_WORD = re.compile(r"[^\W\d_]{2,}")
# ASCII bytes -> lower-case letter or space: one C call tokenises an ASCII text.
_ASCII_LETTERS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))


def tokenize(text: str) -> list[str]:
    """The words of ``text`` as the loader sees them, in order, with repeats.

    Lower-cased maximal runs of letters (``[^\\W\\d_]``, with the combining marks that follow
    a letter) of length at least 2, in Unicode's NFKC form; see :mod:`olboost.datasets.enron`
    for why.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list of str
        The words.

    Examples
    --------
    >>> tokenize("RE: FAQ's for Agency.com -- call Mark (713) 853-7459, Café!")
    ['re', 'faq', 'for', 'agency', 'com', 'call', 'mark', 'café']
    """
    return [w for w in _word_line(text).decode("utf-8").split() if len(w) > 1]


@functools.lru_cache(maxsize=256)
def _word_with_marks(marks: str) -> re.Pattern[str]:
    """Runs of letters and the combining marks ``marks`` that start with a letter."""
    return re.compile(rf"[^\W\d_](?:[^\W\d_]|[{re.escape(marks)}])*")


def _word_line(text: str) -> bytes:
    """``text``'s runs of letters, lower-cased, as UTF-8 separated by spaces; ASCII single
    letters are still in (the vocabulary drops them), other runs have 2 letters or more.

    Other text is first put in Unicode's NFKC form (one spelling per word: composed accents,
    full-width and ligature letters as their plain letters, superscript digits, fractions and
    circled numbers as digits); a combining mark that is left (a vowel sign, the dot that
    lower-casing puts on the ``i`` of ``İ``) belongs to the word it follows."""
    if text.isascii():
        # Letters map to lower case, everything else to a space: one C call.
        return text.encode("ascii").translate(_ASCII_LETTERS)
    text = unicodedata.normalize("NFKC", text).lower()
    marks = "".join(sorted(c for c in set(text) if unicodedata.category(c)[0] == "M"))
    if not marks:
        return " ".join(_WORD.findall(text)).encode("utf-8")
    words = _word_with_marks(marks).findall(text)
    return " ".join(w for w in words if len(w) > 1).encode("utf-8")


def _bags_of_words(word_lines: list[bytes]) -> tuple[sp.csr_array, list[str], np.ndarray]:
    """Binary CSR bags of words of messages in stream order, with the vocabulary indexed by
    first appearance, and the vocabulary size after each prefix of the stream.

    Single letters (ASCII text keeps them in its word lines) are indexed like any word, then
    their columns are removed and the others renumbered in order, which keeps first-appearance
    order (cheaper than filtering a million words one by one)."""
    index: dict[bytes, int] = {}
    columns: list[int] = []
    indptr = np.zeros(len(word_lines) + 1, dtype=np.int64)
    sizes = np.zeros(len(word_lines) + 1, dtype=np.int64)
    setdefault = index.setdefault
    for t, line in enumerate(word_lines):
        # dict.fromkeys: each word once, in text order; setdefault gives a new word the next column.
        columns.extend([setdefault(w, len(index)) for w in dict.fromkeys(line.split())])
        indptr[t + 1] = len(columns)
        sizes[t + 1] = len(index)
    words = [w.decode("utf-8") for w in index]
    keep = np.fromiter((len(w) > 1 for w in words), dtype=np.bool_, count=len(words))
    renumber = np.cumsum(keep) - 1
    old = np.asarray(columns, dtype=np.int64)
    kept = keep[old]
    indices = renumber[old[kept]]
    indptr = np.concatenate(([0], np.cumsum(kept, dtype=np.int64)))[indptr]
    sizes = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))[sizes]
    vocabulary = [w for w, k in zip(words, keep.tolist(), strict=True) if k]
    dtype = np.int32 if len(vocabulary) < 2**31 else np.int64
    X = sp.csr_array(
        (np.ones(len(indices)), indices.astype(dtype), indptr),
        shape=(len(word_lines), len(vocabulary)),
    )
    X.sort_indices()
    return X, vocabulary, sizes
