"""A synthetic multi-label stream with many labels and a few relevant ones per example.

Tag and ad streams have thousands of labels, each example only a handful, and a few labels are far
more frequent than the rest. :func:`make_label_stream` draws such a stream, with the relevant labels
depending on the features, so that a learner has something to learn beyond label frequencies. It
returns plain arrays, as :func:`sklearn.datasets.make_multilabel_classification` does; the boosters'
``score_then_learn(X, Y)`` and ``learn(X, Y)`` take them as they are.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["INFORMATIVE", "SIGNAL", "make_label_stream"]

#: Scale of the feature term ``x . p_j`` (standard normal for every label) in the labels' scores,
#: against Gumbel noise of standard deviation ``pi / sqrt(6)`` (about 1.28): the features decide
#: much, but not all, of which labels are relevant.
SIGNAL = 3.0

#: Features each label's prototype uses by default. Few, so that trees, which split on one feature
#: at a time, learn within a thousand examples: over 1,000 examples of 20 labels, a 20-tree
#: Ada.OLMR's rank loss was 0.009 below label-frequency ranking's with 50 dense components, and
#: 0.04 below with 3 (both at skew 1).
INFORMATIVE = 3

# Rows scored at once: bounds the (rows, labels) float64 temporaries (8 MB at 5,000 labels) so
# that generating a stream does not cost more memory than the stream itself.
_CHUNK = 200


def _count(value: object, name: str, low: int) -> int:
    # bool is an Integral, but `labels=True` is a mistake, not the number 1.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def make_label_stream(
    n: int,
    labels: int,
    relevant: int = 5,
    features: int = 50,
    seed: int = 0,
    *,
    informative: int | None = None,
    skew: float = 1.5,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a multi-label stream in which every example has exactly ``relevant`` of ``labels``.

    Each label ``j`` has a prototype ``p_j``, a random unit vector with ``informative`` non-zero
    components (on features drawn at random per label), and a popularity rank ``r_j`` (a random
    permutation of ``1..labels``). An example's features ``x`` are standard normal, and its
    relevant labels are the ``relevant`` largest of the scores

    .. math::

        s_j = \\mathrm{SIGNAL} \\cdot x \\cdot p_j - \\mathrm{skew} \\cdot \\log r_j + g_j,

    with ``g_j`` independent standard Gumbel noise. By the Gumbel-top-k trick this is a draw of
    ``relevant`` labels without replacement, each next one with probability proportional to
    ``exp(SIGNAL x . p_j) / r_j ** skew``: a Zipf prior on the labels, as tags and ads have, which
    the features shift per example, so that a learner that uses them ranks better than the label
    frequencies do. The shifts flatten the labels' overall frequencies somewhat: with the
    defaults, over 200 labels, the 10 most frequent hold about 37% of the relevant labels and the
    100 least frequent about 13%.

    Parameters
    ----------
    n : int
        Number of examples (rows), >= 0.
    labels : int
        Number of labels ``k``, >= 2.
    relevant : int
        Relevant labels per example, in ``[1, labels - 1]`` (so that every example has both
        relevant and irrelevant labels, and a defined rank loss).
    features : int
        Number of features ``d``, >= 1.
    seed : int
        Seed of :func:`numpy.random.default_rng`, >= 0. The same arguments always give the same
        stream; the first ``m`` rows of a longer stream with the same seed are *not* those of an
        ``m``-row stream (the prototypes are drawn first, then all the features).
    informative : int or None
        Non-zero components of each label's prototype, in ``[1, features]``; None:
        ``min(INFORMATIVE, features)``. The other features are noise for that label.
    skew : float
        Zipf exponent of the labels' prior popularity, >= 0 and finite; 0 makes every label
        equally popular a priori.

    Returns
    -------
    X : numpy.ndarray
        float64 features, shape ``(n, features)``, C-contiguous.
    Y : numpy.ndarray
        bool label matrix, shape ``(n, labels)``; ``Y[i, j]`` says whether label ``j`` is relevant
        to row ``i``, and every row has exactly ``relevant`` True values. A dense bool matrix is
        what the boosters take (``n * labels`` bytes: 15 MB for 3,000 rows of 5,000 labels).
        Wrap both in :class:`olboost.datasets.MultiLabelDataset` for
        :func:`olboost.evaluate.prequential` or the CLI's code paths that take data sets.

    Raises
    ------
    TypeError
        If a count or ``seed`` is not an int, or ``skew`` not a real number.
    ValueError
        If an argument is out of its range; the message names it.

    Examples
    --------
    >>> import numpy as np
    >>> from olboost.datasets import make_label_stream
    >>> X, Y = make_label_stream(1000, labels=200, relevant=5, features=50, seed=0)
    >>> X.shape, Y.shape, Y.dtype
    ((1000, 50), (1000, 200), dtype('bool'))
    >>> set(Y.sum(axis=1).tolist())
    {5}
    >>> freq = np.sort(Y.mean(axis=0))[::-1]
    >>> bool(freq[:10].sum() > freq[-100:].sum())  # a few popular labels, a long tail
    True
    >>> X2, Y2 = make_label_stream(1000, labels=200, seed=0)
    >>> bool((X == X2).all() and (Y == Y2).all())
    True
    """
    n = _count(n, "n", 0)
    labels = _count(labels, "labels", 2)
    relevant = _count(relevant, "relevant", 1)
    if relevant >= labels:
        raise ValueError(f"relevant must be < labels={labels}, got {relevant}")
    features = _count(features, "features", 1)
    if informative is None:
        informative = min(INFORMATIVE, features)
    informative = _count(informative, "informative", 1)
    if informative > features:
        raise ValueError(f"informative must be <= features={features}, got {informative}")
    seed = _count(seed, "seed", 0)
    if isinstance(skew, bool) or not isinstance(skew, numbers.Real):
        raise TypeError(f"skew must be a real number, got {type(skew).__name__}")
    if not (math.isfinite(skew) and skew >= 0):
        raise ValueError(f"skew must be finite and >= 0, got {skew}")

    rng = np.random.default_rng(seed)
    P = np.zeros((features, labels))
    # Each label's support: the first `informative` of a random order of the features (one
    # argsort of uniform keys for all labels, rather than a choice() call per label).
    support = np.argsort(rng.random((features, labels)), axis=0)[:informative]
    P[support, np.arange(labels)] = rng.standard_normal((informative, labels))
    # Unit prototypes, so that x . p_j is standard normal for every label and no label is
    # favoured by the length of its prototype.
    P /= np.linalg.norm(P, axis=0)
    P *= SIGNAL
    log_rank = np.empty(labels)
    log_rank[rng.permutation(labels)] = [math.log(r) for r in range(1, labels + 1)]
    bias = -float(skew) * log_rank
    X = rng.standard_normal((n, features))
    Y = np.zeros((n, labels), dtype=np.bool_)
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        S = X[lo:hi] @ P
        S += bias
        S += rng.gumbel(size=S.shape)
        # The order within the top `relevant` does not matter, only which labels they are.
        top = np.argpartition(-S, relevant - 1, axis=1)[:, :relevant]
        Y[np.arange(lo, hi)[:, None], top] = True
    return X, Y
