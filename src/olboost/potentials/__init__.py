"""Exact potential functions of the boost-by-majority boosters, with Monte Carlo twins.

A potential ``phi^n(s)`` estimates the booster's final loss when ``n`` weak learners remain and the
current cumulative vote is ``s``, if every remaining learner drew its prediction from the baseline
``u`` (a distribution over labels with an edge ``gamma`` on the right labels): ``phi^n(s) =
E L(s + X)``, ``X`` the label counts of ``n`` i.i.d. draws from ``u``.

* **OnlineBMR** (Jung & Tewari 2018, eq. 1-3): pairwise multi-label ranking losses ``L^Y(s) = w_Y
  sum_{l in Y, r notin Y} f(s[r] - s[l])`` (``"rank"``, ``"hinge"``, ``"hinge_no_margin"``) under
  ``u_gamma^Y`` (``a + gamma`` on ``Y``, ``a = (1 - gamma |Y|) / k`` everywhere else). Each pair
  depends on ``X`` through ``D = X_r - X_l`` only, a sum of ``n`` steps whose law is computed once
  per ``(n, |Y|, k, gamma)`` (:func:`difference_law`, cached) and looked up in O(1) per pair, for
  real scores.
* **OnlineMBBM** (Jung, Goetz & Tewari 2017, eq. 2-5 and 16): the multiclass 0-1 potential under
  ``u_gamma^r``, computed exactly by dynamic programming (memoised on the sorted differences), its
  cost row, normalisation, weight and weight bounds (Lemma 10).
* **Top-k BBM** (Raman et al. 2020, Sec. 3.2.2, eq. 2-3): the surrogate potential ``Phi^n = sum_{a
  in R, b notin R} Lambda^{a,b,n}``, each pair under its own baseline ``u_a^gamma``.

Every potential and cost function takes ``method="exact"`` or ``method="monte_carlo"`` (``draws``
samples of ``X``, as the authors did with ``M = 100``, and a ``seed``). The compiled kernels that
boosters call from their own loops live beside each family, in
:mod:`olboost.potentials._pairwise_kernels`, :mod:`~olboost.potentials._multiclass_kernels` and
:mod:`~olboost.potentials._topk_kernels`; the losses themselves in :mod:`olboost.losses`.

Examples
--------
>>> import numpy as np
>>> from olboost.potentials import pairwise_potential, pairwise_costs, normalize_costs
>>> s = np.zeros(4)
>>> round(pairwise_potential(s, [0], n=0, gamma=0.1, loss="rank"), 6)   # all tied: 1/2
0.5
>>> round(pairwise_potential(s, [0], n=1, gamma=0.1, loss="rank"), 6)   # 1/2 - gamma/2
0.45
>>> c = pairwise_costs(s, [0], n=3, gamma=0.1, loss="hinge")
>>> bool(c[0] < c[1] == c[2] == c[3])                                    # proper
True
>>> d, w = normalize_costs(c)
>>> d.round(6).tolist(), round(w, 6)
([0.0, 1.0, 1.0, 1.0], 0.828703)
>>> from olboost.potentials import multiclass_potential
>>> round(multiclass_potential([0, 0, 0], 0, n=1, gamma=0.4), 6)        # 1 - u_r
0.4
"""

from olboost.potentials._checks import LOSSES
from olboost.potentials.multiclass import (
    BERRY_ESSEEN_C,
    MULTICLASS_MEMO_SIZE,
    mbbm_weight_bound,
    multiclass_costs,
    multiclass_potential,
    multiclass_weight,
    normalize_multiclass_costs,
)
from olboost.potentials.pairwise import (
    LAW_CACHE_SIZE,
    bmr_weight_bound,
    difference_law,
    difference_law_stack,
    difference_law_table,
    normalize_costs,
    pairwise_costs,
    pairwise_potential,
)
from olboost.potentials.topk import topk_costs, topk_potential

__all__ = [
    "BERRY_ESSEEN_C",
    "LAW_CACHE_SIZE",
    "LOSSES",
    "MULTICLASS_MEMO_SIZE",
    "difference_law",
    "difference_law_table",
    "difference_law_stack",
    "pairwise_potential",
    "pairwise_costs",
    "normalize_costs",
    "bmr_weight_bound",
    "multiclass_potential",
    "multiclass_costs",
    "normalize_multiclass_costs",
    "multiclass_weight",
    "mbbm_weight_bound",
    "topk_potential",
    "topk_costs",
]
