"""Argument validation shared by the potential families of :mod:`olboost.potentials`."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from olboost.losses.pairwise import LOSS_CODES
from olboost.metrics._rank import _as_mask_1d

#: Names of the pairwise losses, in the order of their codes in :mod:`olboost.losses.pairwise`.
LOSSES = ("rank", "hinge", "hinge_no_margin")
_METHODS = ("exact", "monte_carlo")


def _check_n(n: object, name: str = "n") -> int:
    if isinstance(n, bool | np.bool_) or not isinstance(n, Integral):
        raise TypeError(f"{name} must be an integer, got {n!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _check_gamma(gamma: object) -> float:
    if isinstance(gamma, bool | np.bool_) or not isinstance(gamma, Real):
        raise TypeError(f"gamma must be a real number, got {gamma!r}")
    g = float(gamma)
    if not 0.0 < g < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {g}")
    return g


def _check_k(k: object) -> int:
    k = _check_n(k, "k")
    if k < 2:
        raise ValueError(f"k must be >= 2, got {k}")
    return k


def _check_baseline(gamma: float, n_relevant: int, k: int) -> None:
    """``u_gamma^Y`` is a distribution only if ``a = (1 - gamma |Y|) / k >= 0``, i.e.
    ``gamma |Y| <= 1`` (at 1, ``a = 0``: all the mass on the relevant labels)."""
    if 0 < n_relevant < k and gamma * n_relevant > 1.0:
        raise ValueError(
            f"gamma * |Y| must be <= 1 for the baseline u_gamma^Y to be a distribution, got "
            f"gamma={gamma} with |Y|={n_relevant} (a = (1 - gamma |Y|) / k = "
            f"{(1.0 - gamma * n_relevant) / k:.6g})"
        )


def _check_scores(s: object) -> np.ndarray:
    arr = np.asarray(s)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"s must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"s must be 1-D (one score per label), got shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"s must have at least 2 labels, got length {arr.shape[0]}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("s must be finite (no NaN or infinity)")
    return arr


def _check_int_scores(s: object) -> np.ndarray:
    arr = _check_scores(s)
    if not np.all(arr == np.round(arr)):
        raise ValueError(
            "s must hold integer scores (unweighted votes of single-label learners) for the "
            f"multiclass 0-1 potential, got {arr.tolist()}"
        )
    if np.max(np.abs(arr)) > 2.0**52:
        raise ValueError("s must hold integer scores of magnitude below 2**52")
    return arr.astype(np.int64)


def _check_label(label: object, k: int, name: str = "true_label") -> int:
    if isinstance(label, bool | np.bool_) or not isinstance(label, Integral):
        raise TypeError(f"{name} must be an integer label, got {label!r}")
    label = int(label)
    if not 0 <= label < k:
        raise ValueError(f"{name} must be in [0, {k - 1}], got {label}")
    return label


def _check_method(method: object, draws: object, seed: object = None) -> int:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {list(_METHODS)}, got {method!r}")
    if isinstance(draws, bool | np.bool_) or not isinstance(draws, Integral):
        raise TypeError(f"draws must be an integer, got {draws!r}")
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    # the Monte Carlo draws' seed, checked whatever the method (NumPy's own messages for a bad
    # one named no parameter: "SeedSequence expects int or sequence of ints ...")
    if seed is not None and not isinstance(seed, np.random.Generator):
        if isinstance(seed, bool | np.bool_) or not isinstance(seed, Integral):
            raise TypeError(f"seed must be None, an integer or a numpy Generator, got {seed!r}")
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
    return int(draws)


def _loss_code(loss: object, codes: dict[str, int] = LOSS_CODES) -> int:
    if loss not in codes:
        raise ValueError(f"loss must be one of {list(LOSSES)}, got {loss!r}")
    return codes[loss]


def _check_pairwise_args(s, relevant, n, gamma, loss, method, draws, seed, codes=LOSS_CODES):
    """The arguments of a pairwise or top-k potential, checked in this order: ``(s, k, y, n,
    gamma, code, draws)`` with ``y`` the boolean mask of ``relevant`` and ``code`` the loss code
    (from ``codes``: :data:`~olboost.losses.pairwise.TOPK_LOSS_CODES` for the top-k ones)."""
    s = _check_scores(s)
    k = s.shape[0]
    y = _as_mask_1d(relevant, k)
    n = _check_n(n)
    gamma = _check_gamma(gamma)
    code = _loss_code(loss, codes)
    draws = _check_method(method, draws, seed)
    return s, k, y, n, gamma, code, draws
