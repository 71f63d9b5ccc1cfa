"""OnlineBMR cost vectors, exact vs Monte Carlo (``python benchmarks/potentials.py [--quick]``).

The OnlineBMR cost vector ``c[l] = phi^n(s + e_l)`` (Jung & Tewari 2018, eq. 2) is computed by
:func:`olboost.potentials.pairwise_costs` exactly (``method="exact"``: the law of ``D = X_r -
X_l``, then O(|Y| |Y^c|) per vector) or by Monte Carlo (``method="monte_carlo"``, ``M = 100``
draws of ``X``, as the authors did). Both run on the same states, those a booster meets:

* for ``k`` labels and ``N`` learners, an example is ``N`` random weak distributions
  ``h^1..h^N`` (rows of ``Dirichlet(0.5, ..., 0.5)``) and a relevant set ``Y`` of realistic size
  (``|Y| = 1 + Poisson(m - 1)`` clipped to ``[1, 9]`` with ``m`` = 2 for k = 6, 4 for k = 14
  and k = 101, so that ``gamma |Y| < 1`` at ``gamma = 0.1``);
* learner ``i = 1..N`` gets the state ``s = s^{i-1} = h^1 + ... + h^{i-1}`` with ``n = N - i``
  draws left, so every ``n = 0..N-1`` occurs once per example.

Measured per ``(k, N)``, each in its own subprocess, after a warm-up pass (compilation, law cache),
as the best of several timed passes (the median is recorded too):

* ``exact``: ``pairwise_costs(..., method="exact")`` through the public, validating API, laws
  cached; ``exact_cold_cache``: one pass after clearing the law cache (every law recomputed);
* ``monte_carlo``: ``pairwise_costs(..., method="monte_carlo", draws=100)``;
* ``kernel_call``: :func:`olboost.potentials._pairwise_kernels.bmr_costs` called from Python on a
  precomputed :func:`olboost.potentials.difference_law_stack`;
* ``booster_update``: :func:`olboost.boosters._bmr_kernels.online_bmr_update`, the compiled loop
  OnlineBMR runs per example (``N`` cost vectors per call), i.e. what the booster actually uses.

Throughput is given in cost vectors per second and in potential evaluations per second (a cost
vector is ``k`` potentials ``phi^n(s + e_l)``). Accuracy: the largest ``|MC - exact|`` over every
state and label, and the exact path against brute-force enumeration of every multinomial outcome
on small cases. Target (issue): exact is faster than Monte Carlo in every case *and* exact.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from _common import loadavg, machine_info, run_one

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: (k, N) cases of the issue.
CASES = [(6, 10), (6, 100), (14, 10), (14, 100), (101, 10), (101, 100)]
#: Typical |Y| per k (emotions: 1.9 of 6; 14 labels (yeast): 4.2; 101 labels (mediamill): 4.4).
REL_SIZE = {6: 2, 14: 4, 101: 4}
GAMMA = 0.1
LOSS = "hinge"
DRAWS = 100
#: |Y| stays below 1 / GAMMA so that the baseline u_gamma^Y is a distribution.
MAX_REL = 9
#: Concentration of the Dirichlet weak distributions (0.5: fairly peaked, like tree leaves).
DIRICHLET = 0.5
SEED = 20240601


# --------------------------------------------------------------------------------------------------
# States
# --------------------------------------------------------------------------------------------------


def make_examples(k: int, N: int, n_examples: int, seed: int = SEED) -> list[tuple]:
    """``n_examples`` pairs ``(H, y)``: ``N`` weak distributions over ``k`` labels and a mask."""
    rng = np.random.default_rng([seed, k, N])
    out = []
    for _ in range(n_examples):
        H = rng.dirichlet(np.full(k, DIRICHLET), size=N)
        size = int(np.clip(1 + rng.poisson(REL_SIZE[k] - 1), 1, min(MAX_REL, k - 1)))
        y = np.zeros(k, dtype=np.bool_)
        y[rng.choice(k, size=size, replace=False)] = True
        out.append((H, y))
    return out


def states(examples: list[tuple]) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """``(s^{i-1}, y, N - i)`` for every learner ``i`` of every example."""
    out = []
    for H, y in examples:
        N = H.shape[0]
        s = np.zeros(H.shape[1])
        for i in range(N):
            out.append((s.copy(), y, N - 1 - i))
            s += H[i]
    return out


# --------------------------------------------------------------------------------------------------
# Brute force: every multinomial outcome with its exact probability
# --------------------------------------------------------------------------------------------------


def _compositions(n: int, k: int):
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        cuts = (-1, *bars, n + k - 1)
        yield np.array([cuts[j + 1] - cuts[j] - 1 for j in range(k)], dtype=float)


def _pmf(x: np.ndarray, u: np.ndarray) -> float:
    coef = math.factorial(int(x.sum()))
    for xi in x:
        coef //= math.factorial(int(xi))
    return coef * float(np.prod(u**x))


def _f(x: float, loss: str) -> float:
    if loss == "rank":
        return 1.0 if x > 0 else (0.5 if x == 0 else 0.0)
    return max(0.0, x + 1.0) if loss == "hinge" else max(0.0, x)


def brute_costs(s: np.ndarray, y: np.ndarray, n: int, gamma: float, loss: str) -> np.ndarray:
    """``c[l] = E L^Y(s + e_l + X)`` by enumerating every outcome ``X`` of ``n`` draws."""
    k = len(s)
    n_rel = int(y.sum())
    a = (1.0 - gamma * n_rel) / k
    u = np.where(y, a + gamma, a)
    rel, irr = np.flatnonzero(y), np.flatnonzero(~y)
    w = 1.0 / (len(rel) * len(irr))
    outcomes = [(x, _pmf(x, u)) for x in _compositions(n, k)]
    c = np.zeros(k)
    for j in range(k):
        t = s.copy()
        t[j] += 1.0
        for x, p in outcomes:
            v = t + x
            c[j] += p * w * sum(_f(v[r] - v[l], loss) for l in rel for r in irr)
    return c


def brute_force_check() -> dict:
    """Exact ``pairwise_costs`` against enumeration on small seeded cases, every loss."""
    from olboost.potentials import pairwise_costs

    worst = 0.0
    n_vectors = 0
    for k, N, size in [(4, 6, 1), (4, 6, 2), (5, 5, 2), (6, 4, 3)]:
        rng = np.random.default_rng([SEED, k, N, size])
        H = rng.dirichlet(np.full(k, DIRICHLET), size=N)
        y = np.zeros(k, dtype=np.bool_)
        y[rng.choice(k, size=size, replace=False)] = True
        s = np.zeros(k)
        for i in range(N):
            for loss in ("rank", "hinge", "hinge_no_margin"):
                # integer states too: the rank loss has ties there
                for state in (s, np.round(s)):
                    exact = pairwise_costs(state, y, N - 1 - i, GAMMA, loss)
                    brute = brute_costs(state, y, N - 1 - i, GAMMA, loss)
                    worst = max(worst, float(np.max(np.abs(exact - brute))))
                    n_vectors += 1
            s += H[i]
    return {
        "what": "exact pairwise_costs vs enumeration of every multinomial outcome; k in 4..6, "
        "n in 0..5, |Y| in 1..3, losses rank/hinge/hinge_no_margin, real and integer states",
        "cost_vectors_compared": n_vectors,
        "max_abs_difference": worst,
        "tolerance": 1e-12,
        "agree": worst <= 1e-12,
    }


# --------------------------------------------------------------------------------------------------
# One timed case (run in a subprocess)
# --------------------------------------------------------------------------------------------------


def _time(fn, repeats: int) -> dict:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"best_seconds": min(times), "median_seconds": statistics.median(times)}


def _case(k: int, N: int, n_states: int) -> dict:
    from olboost.boosters._bmr_kernels import online_bmr_update
    from olboost.losses import pairwise as L
    from olboost.potentials import _pairwise_kernels as K
    from olboost.potentials import pairwise as P

    load_start = loadavg()
    examples = make_examples(k, N, max(1, n_states // N))
    todo = states(examples)
    code = {"rank": L.RANK, "hinge": L.HINGE, "hinge_no_margin": L.HINGE_NO_MARGIN}[LOSS]
    seeds = [np.random.SeedSequence([SEED, k, N, j]) for j in range(len(todo))]

    def exact() -> list[np.ndarray]:
        return [P.pairwise_costs(s, y, n, GAMMA, LOSS) for s, y, n in todo]

    def monte_carlo() -> list[np.ndarray]:
        return [
            P.pairwise_costs(s, y, n, GAMMA, LOSS, "monte_carlo", DRAWS, np.random.default_rng(q))
            for (s, y, n), q in zip(todo, seeds, strict=True)
        ]

    # The stacks of every n at once, as the booster precomputes them (cached by |Y|), and
    # writable as the booster's are: the public stack is a read-only view, a Numba type of its
    # own, and the kernels timed would be a second compilation that no booster runs (and a
    # second compile of the chain, about 30 s of a cold test run).
    stacks = {}
    for _, y in examples:
        d_min, tables = P.difference_law_stack(N - 1, int(y.sum()), k, GAMMA)
        stacks[int(y.sum())] = (d_min, np.array(tables))
    out = np.empty(k)

    def kernel() -> None:
        for s, y, n in todo:
            d_min, tables = stacks[int(y.sum())]
            K.bmr_costs(s, y, tables[n], d_min, code, out)

    weights = np.empty((N, k))
    w_max = np.zeros(N)

    def booster() -> None:
        for H, y in examples:
            d_min, tables = stacks[int(y.sum())]
            online_bmr_update(H, y, tables, d_min, code, weights, w_max)

    # Warm-up: compile every kernel and fill the law cache.
    t0 = time.perf_counter()
    ref = exact()
    monte_carlo_warm = [
        P.pairwise_costs(s, y, n, GAMMA, LOSS, "monte_carlo", DRAWS, 0) for s, y, n in todo[:20]
    ]
    del monte_carlo_warm
    kernel()
    booster()
    warmup = time.perf_counter() - t0

    # Exactness of the fast paths: kernel on the stack == public exact path.
    kernel_diff = 0.0
    for (s, y, n), c in zip(todo, ref, strict=True):
        d_min, tables = stacks[int(y.sum())]
        K.bmr_costs(s, y, tables[n], d_min, code, out)
        kernel_diff = max(kernel_diff, float(np.max(np.abs(out - c))))
    booster_diff = 0.0
    j = 0
    for H, y in examples:
        d_min, tables = stacks[int(y.sum())]
        online_bmr_update(H, y, tables, d_min, code, weights, w_max)
        for i in range(N):
            c = ref[j + i]
            expected = np.where(y, c.max() - c, 0.0)
            booster_diff = max(booster_diff, float(np.max(np.abs(weights[i] - expected))))
        j += N

    n_vec = len(todo)
    timings = {
        "exact": _time(exact, 5),
        "monte_carlo": _time(monte_carlo, 3),
        "kernel_call": _time(kernel, 5),
        "booster_update": _time(booster, 5),
    }

    def cold() -> None:
        P._law_cached.cache_clear()
        exact()

    timings["exact_cold_cache"] = _time(cold, 1)
    P._law_cached.cache_clear()
    exact()  # leave the cache as the warm runs had it

    mc = monte_carlo()
    err = np.array([np.max(np.abs(m - e)) for m, e in zip(mc, ref, strict=True)])
    spread = np.array([e.max() - e.min() for e in ref])
    rel = err[spread > 0] / spread[spread > 0]
    for t in timings.values():
        t["cost_vectors_per_s"] = n_vec / t["best_seconds"]
        t["potentials_per_s"] = n_vec * k / t["best_seconds"]
    ratio = timings["monte_carlo"]["best_seconds"] / timings["exact"]["best_seconds"]
    return {
        "k": k,
        "N": N,
        "gamma": GAMMA,
        "loss": LOSS,
        "draws": DRAWS,
        "examples": len(examples),
        "cost_vectors": n_vec,
        "mean_relevant": float(np.mean([y.sum() for _, y in examples])),
        "warmup_seconds": warmup,
        "timings": timings,
        "speedup_exact_over_monte_carlo": ratio,
        "speedup_booster_update_over_monte_carlo": (
            timings["monte_carlo"]["best_seconds"] / timings["booster_update"]["best_seconds"]
        ),
        "monte_carlo_max_abs_error": float(err.max()),
        "monte_carlo_mean_abs_error": float(err.mean()),
        "monte_carlo_max_error_over_spread": float(rel.max()) if rel.size else 0.0,
        "kernel_max_abs_difference_to_exact": kernel_diff,
        "booster_max_abs_weight_difference_to_exact": booster_diff,
        "target": "exact faster than monte_carlo",
        "met": ratio > 1.0,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


# --------------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=3, metavar=("K", "N", "STATES"))
    parser.add_argument("--quick", action="store_true", help="few states per case (a smoke run)")
    args = parser.parse_args()
    if args.one:
        k, N, n_states = (int(v) for v in args.one)
        print(json.dumps(_case(k, N, n_states)))
        return 0

    n_states = 200 if args.quick else 2000
    RESULTS.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    brute = brute_force_check()
    print(
        f"brute force: {brute['cost_vectors_compared']} cost vectors, max |exact - brute| = "
        f"{brute['max_abs_difference']:.1e} ({'agree' if brute['agree'] else 'DISAGREE'})",
        flush=True,
    )
    head = (
        f"{'k':>4} {'N':>4} {'|Y|':>4} {'exact/s':>10} {'MC/s':>9} {'ratio':>7} "
        f"{'kernel/s':>10} {'update/s':>10} {'cold/s':>9} {'max|MC-ex|':>10}"
    )
    print(f"cost vectors per second (best of repeats), {n_states} per case\n{head}", flush=True)
    cases = {}
    for k, N in CASES:
        r = run_one(__file__, [str(k), str(N), str(n_states)])
        cases[f"k{k}-N{N}"] = r
        t = r["timings"]
        print(
            f"{k:>4} {N:>4} {r['mean_relevant']:>4.1f} {t['exact']['cost_vectors_per_s']:>10.0f} "
            f"{t['monte_carlo']['cost_vectors_per_s']:>9.0f} "
            f"{r['speedup_exact_over_monte_carlo']:>6.0f}x "
            f"{t['kernel_call']['cost_vectors_per_s']:>10.0f} "
            f"{t['booster_update']['cost_vectors_per_s']:>10.0f} "
            f"{t['exact_cold_cache']['cost_vectors_per_s']:>9.0f} "
            f"{r['monte_carlo_max_abs_error']:>10.3g}",
            flush=True,
        )
    exact_everywhere = brute["agree"] and all(
        c["kernel_max_abs_difference_to_exact"] <= 1e-12
        and c["booster_max_abs_weight_difference_to_exact"] <= 1e-12
        for c in cases.values()
    )
    faster_everywhere = all(c["met"] for c in cases.values())
    out = {
        "benchmark": "potentials",
        "quick": args.quick,
        "machine": machine,
        "loadavg_end": loadavg(),
        "setup": {
            "states": "per example N Dirichlet(0.5) weak distributions h^1..h^N and a relevant "
            "set Y; learner i gets s = h^1 + ... + h^{i-1} and n = N - i",
            "relevant_size": "1 + Poisson(m - 1) clipped to [1, 9]",
            "relevant_size_m": REL_SIZE,
            "gamma": GAMMA,
            "loss": LOSS,
            "monte_carlo_draws": DRAWS,
            "timing": "per case in its own subprocess, after a warm-up pass; best of 5 (exact, "
            "kernel, update) or 3 (monte_carlo) passes, median recorded too; "
            "exact_cold_cache is one pass after clearing the law cache",
            "potentials_per_s": "cost_vectors_per_s * k (a cost vector is k potentials)",
        },
        "brute_force": brute,
        "cases": cases,
        "target": "exact faster than Monte Carlo (M = 100) in every case, and exact",
        "faster_everywhere": faster_everywhere,
        "exact_everywhere": exact_everywhere,
        "met": faster_everywhere and exact_everywhere,
    }
    path = RESULTS / ("potentials.quick.json" if args.quick else "potentials.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"target met: {out['met']} (faster: {faster_everywhere}, exact: {exact_everywhere})")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
