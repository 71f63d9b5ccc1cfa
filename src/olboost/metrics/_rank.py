"""The rank loss of Jung & Tewari (2018), Sec. 3.1, for one score vector or a batch, validated.

For a score vector ``s`` over ``k`` labels and a set ``Y`` of relevant labels,

    L(s) = w_Y * sum_{l in Y} sum_{r not in Y} [1(s[l] < s[r]) + 1/2 1(s[l] = s[r])],

with ``w_Y = 1 / (|Y| |Y^c|)`` (weighted) or ``w_Y = 1`` (unweighted: the number of mis-ordered
relevant/irrelevant pairs, a tie counting one half).

The compiled O(k log k) kernels, :func:`rank_loss_mask` among them (the one boosters call from
their own compiled code), live in :mod:`olboost.losses.pairwise`; this module adds the batch loop
and the validated entry point :func:`rank_loss`.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Set
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike

from olboost.feedback import bool_apart
from olboost.losses.pairwise import _rank_loss_one, rank_loss_mask
from olboost.online.inputs import relevant_in_mapping

__all__ = ["rank_loss", "rank_loss_mask"]


@numba.njit(cache=True)
def _rank_loss_batch(
    scores: np.ndarray, masks: np.ndarray, weighted: bool, skip_empty: bool
) -> np.ndarray:
    """Row-wise :func:`_rank_loss_one` over an ``(n, k)`` batch; returns ``(n,)`` float64."""
    n = scores.shape[0]
    out = np.empty(n, dtype=np.float64)
    for t in range(n):
        out[t] = _rank_loss_one(scores[t], masks[t], weighted, skip_empty)
    return out


# --------------------------------------------------------------------------------------------------
# Validated Python entry point
# --------------------------------------------------------------------------------------------------

_EMPTY_CONVENTIONS = ("paper", "skip")


def _as_scores(scores: object) -> np.ndarray:
    s = np.asarray(scores)
    if s.dtype.kind == "b":
        # a prediction (predict_one's {label: bool}, as River's evaluation hands a metric) read
        # as scores of 1 and 0 gave a plausible loss of a ranking full of ties
        raise TypeError(
            "scores must be real numbers, got booleans: a prediction of which labels are "
            "relevant (predict_one's) has no order; pass the scores (score_one's)"
        )
    if s.dtype.kind not in "iuf":
        raise TypeError(f"scores must be real numbers, got dtype {s.dtype}")
    if s.ndim not in (1, 2):
        raise ValueError(f"scores must be 1-D (k,) or 2-D (n, k), got shape {s.shape}")
    if s.shape[-1] == 0:
        raise ValueError("scores must have at least one label (k >= 1)")
    s = np.ascontiguousarray(s, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite (no NaN or infinity)")
    return s


def _as_mask_1d(relevant: object, k: int) -> np.ndarray:
    """A boolean mask of length ``k`` from a mask, a collection of label indices or one index."""
    if isinstance(relevant, bool | np.bool_):
        raise TypeError("relevant must be a boolean mask or label indices, got a single bool")
    if isinstance(relevant, Set):
        relevant = list(relevant)
    arr = np.asarray(relevant)
    if arr.dtype == np.bool_:
        if arr.shape != (k,):
            raise ValueError(
                f"relevant as a boolean mask must have the length of s, the scores ({k},), "
                f"got {arr.shape}"
            )
        return np.ascontiguousarray(arr)
    if arr.size == 0 and arr.ndim == 1:
        return np.zeros(k, dtype=np.bool_)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"relevant must be a boolean mask or integer label indices, got dtype {arr.dtype}"
        )
    if arr.ndim > 1:
        raise ValueError(f"relevant label indices must be 1-D, got shape {arr.shape}")
    arr = arr.reshape(-1)
    bad = (arr < 0) | (arr >= k)
    if np.any(bad):
        raise ValueError(f"relevant labels must be in [0, {k - 1}], got {arr[bad].tolist()}")
    if arr.size == k > 2 and np.all(arr <= 1):
        # the shape of an integer 0/1 indicator row ([1, 0, 0, 1]), which was read as the
        # indices {0, 1}: no error, and a wrong loss (indices may repeat, but not so)
        raise ValueError(
            f"relevant holds {k} label indices, each 0 or 1: an integer 0/1 indicator row? "
            "Pass it as a bool array (relevant.astype(bool)), or the indices without repeats"
        )
    mask = np.zeros(k, dtype=np.bool_)
    mask[arr] = True
    return mask


def _labelled(scores: Mapping[Hashable, float], relevant: object) -> tuple[np.ndarray, np.ndarray]:
    """Scores and relevant-label mask, in the order of the keys of ``scores`` (a learner's
    ``score_one``), from ``relevant``: a set of labels or River's ``{label: bool}``, where an
    absent label is irrelevant. Raises on an unknown label or a non-bool value."""
    labels = list(scores)
    s = _as_scores([scores[label] for label in labels])
    # bool-apart keys: True is not the label 1, nor False the label 0 (as the learners read them)
    index = {bool_apart(label): i for i, label in enumerate(labels)}
    if isinstance(relevant, Mapping):
        chosen = {bool_apart(label) for label in relevant_in_mapping(relevant, "relevant")}
        keys = list(relevant)
    elif isinstance(relevant, Set):
        keys = list(relevant)
        chosen = {bool_apart(label) for label in relevant}
    else:
        raise TypeError(
            "with scores given as a dict label -> score, relevant must be a set of labels or a "
            f"dict label -> bool, got {type(relevant).__name__}"
        )
    mask = np.zeros(s.shape[0], dtype=np.bool_)
    for label in keys:
        key = bool_apart(label)
        if key not in index:
            raise ValueError(
                f"relevant names the label {label!r}, which has no score; the labels are "
                f"{labels[:10]}" + (" ..." if len(labels) > 10 else "")
            )
        mask[index[key]] = key in chosen
    return s, mask


def rank_loss(
    scores: ArrayLike | Mapping[Any, float],
    relevant: ArrayLike | Collection[Hashable] | int | Mapping[Any, bool],
    *,
    weighted: bool = True,
    empty: str = "paper",
) -> float | np.ndarray:
    """Rank loss of Jung & Tewari (2018, Sec. 3.1) for one score vector or a batch.

    .. math::

        L^Y(s) = w_Y \\sum_{l \\in Y} \\sum_{r \\notin Y}
                 \\mathbb{1}(s[l] < s[r]) + \\tfrac{1}{2} \\mathbb{1}(s[l] = s[r])

    with :math:`w_Y = 1 / (|Y| |Y^c|)` when ``weighted`` (the loss lies in [0, 1]) and
    :math:`w_Y = 1` otherwise (the number of mis-ordered relevant/irrelevant pairs). Computed by a
    compiled O(k log k) sort-and-sweep kernel.

    Parameters
    ----------
    scores
        ``(k,)`` scores, or an ``(n, k)`` batch; finite real numbers (integers are fine). Or the
        scores of one example as a dict label -> score, e.g. a ranking learner's ``score_one``
        output; ``relevant`` then names labels (see below).
    relevant
        The relevant labels ``Y``. For 1-D ``scores``: a boolean mask of length ``k``, a collection
        (list, set, array, range) of integer label indices in ``[0, k)`` (duplicates are ignored,
        but ``k > 2`` indices all 0 or 1 are refused as the integer 0/1 indicator row they look
        like: pass that as a bool array), or a single integer index (multiclass). For 2-D
        ``scores``: an ``(n, k)`` boolean mask.
        For dict ``scores``: a set of labels (keys of ``scores``) or River's multi-label target
        ``{label: bool}`` (the labels mapped to ``True``; a label absent from it is irrelevant,
        as in a set); an unknown label raises ``ValueError``, a value that is not a bool
        ``TypeError``.
    weighted
        Divide by the number of pairs ``|Y| |Y^c|`` (the paper's loss) or not.
    empty
        What an example without pairs (``Y`` empty or every label relevant) gives: ``"paper"`` ->
        0.0, and the example counts in means (the convention of the paper and of the authors'
        code); ``"skip"`` -> NaN, so the example can be left out of means (see
        :class:`olboost.metrics.RankLoss`, which keeps both).

    Returns
    -------
    float or numpy.ndarray
        A float for 1-D ``scores``, an ``(n,)`` float64 array for a batch.

    Notes
    -----
    Differences from :func:`sklearn.metrics.label_ranking_loss`, which computes the same weighted
    pair count averaged over samples:

    - sklearn counts a tied relevant/irrelevant pair as a full error; here a tie counts 1/2, as in
      the paper (a constant score vector has loss 0.5 here, 1.0 in sklearn);
    - sklearn gives 0 to a sample with no relevant or all relevant labels and averages it in, which
      is ``empty="paper"``; it has no equivalent of ``empty="skip"``.

    Without ties and with ``empty="paper"``, ``rank_loss(S, Y).mean()`` equals
    ``label_ranking_loss(Y, S)``.

    Examples
    --------
    >>> from olboost.metrics import rank_loss
    >>> scores = [0.5, 0.2, 0.2, 0.1]
    >>> rank_loss(scores, [0, 2])        # one tie (labels 2 and 1) among 4 pairs
    0.125
    >>> rank_loss(scores, [False, True, False, True])
    0.875
    >>> rank_loss(scores, {0, 2}, weighted=False)
    0.5
    >>> rank_loss(scores, [])            # no pairs: the paper counts 0 ...
    0.0
    >>> rank_loss(scores, [], empty="skip")   # ... or leave the example out
    nan
    >>> import numpy as np
    >>> S = np.array([[3, 2, 1], [1, 1, 1]])
    >>> Y = np.array([[False, True, False], [True, False, False]])
    >>> rank_loss(S, Y)
    array([0.5, 0.5])

    A learner's ``score_one`` output with a set of labels or River's ``{label: bool}``:

    >>> scores = {"sport": 0.9, "music": 0.1, "news": 0.5}
    >>> rank_loss(scores, {"sport", "music"})      # 2 pairs, music below news
    0.5
    >>> rank_loss(scores, {"sport": True, "music": True, "news": False})
    0.5
    """
    if not isinstance(weighted, bool | np.bool_):
        raise TypeError(f"weighted must be a bool, got {weighted!r}")
    if empty not in _EMPTY_CONVENTIONS:
        raise ValueError(f"empty must be one of {list(_EMPTY_CONVENTIONS)}, got {empty!r}")
    skip = empty == "skip"
    if isinstance(scores, Mapping):
        s, y = _labelled(scores, relevant)
        return float(_rank_loss_one(s, y, bool(weighted), skip))
    s = _as_scores(scores)
    if s.ndim == 1:
        y = _as_mask_1d(relevant, s.shape[0])
        return float(_rank_loss_one(s, y, bool(weighted), skip))
    y = np.asarray(relevant)
    if y.dtype != np.bool_:
        raise TypeError(
            "for 2-D scores, relevant must be an (n, k) boolean mask, got dtype "
            f"{y.dtype} (use relevant.astype(bool) for a 0/1 indicator matrix)"
        )
    if y.shape != s.shape:
        raise ValueError(f"relevant must have the shape of scores {s.shape}, got {y.shape}")
    return _rank_loss_batch(s, np.ascontiguousarray(y), bool(weighted), skip)
