"""Issue #12's accuracy targets: every cell of Tables 1 and 2 of Raman et al. (2020), as
``olboost reproduce topk --seeds 10`` runs it, within 0.02 of the published value or better.

Each test is one cell: the jobs :func:`olboost.topk_experiments.plan` makes for it (Table 5's
learners, ``rho`` and loops, ``k = 3``, the default trees), seeds 1-10, mean test weighted rank
loss of the ranking shown (``make accuracy`` runs the ten seeds; ``make test`` reruns one, which
must equal its recorded value, and takes the others from the record: ``tests/protocol.py``).
TopOpt runs at the edge ``reproduce topk --seeds 10`` chose for the cell
(``benchmarks/results/reproduce_topk.json``): the paper reports the best of four edges, so one
edge meeting the target shows that the best does. The 0.02 is the issue's tolerance. The
seeds are fixed, so each mean is one number; its standard error over seeds is 0.002-0.008, and two
cells pass by less than one of theirs: TopAda on emotions under uniform exploration (0.2344
against 0.24, standard error 0.0076) and TopOpt on mediamill-reduced under single swap (0.1271
against 0.13, 0.0059). Another set of seeds could miss there. tmc2007-500 stands in for Mediamill,
which is not here: no target.
"""

from __future__ import annotations

import numpy as np
import pytest

from olboost import topk_experiments as tx
from protocol import seed_values

SEEDS = 10

#: (data set, exploration) -> TopOpt's edge chosen by ``reproduce topk --seeds 10``.
EDGES = {
    ("emotions", "uniform"): 0.3,
    ("scene", "uniform"): 0.2,
    ("yeast", "uniform"): 0.1,
    ("mediamill-reduced", "uniform"): 0.2,
    ("emotions", "single-swap"): 0.2,
    ("scene", "single-swap"): 0.1,
    ("yeast", "single-swap"): 0.1,
    ("mediamill-reduced", "single-swap"): 0.4,
}

CELLS = [
    (name, exploration, column) for (name, exploration) in EDGES for column in ("TopOpt", "TopAda")
]


@pytest.mark.protocol
@pytest.mark.parametrize(("name", "exploration", "column"), CELLS)
def test_topk_cell_within_0_02_of_the_published_value(name, exploration, column, request):
    gamma = EDGES[name, exploration]
    jobs = {
        job.seed: job
        for job in tx.plan([name], [exploration], SEEDS, gammas=(gamma,), full=False)
        if job.column == column
    }
    assert sorted(jobs) == list(range(1, SEEDS + 1))
    assert {job.trees for job in jobs.values()} == {tx.TREES[0]}
    losses = seed_values(request.node.nodeid, jobs, lambda s: tx.run_job(jobs[s])["rank_loss"])
    mean = float(np.mean(losses))
    published = tx.PUBLISHED[exploration][name][tx.COLUMNS.index(column)]
    assert mean <= published + tx.TOLERANCE, (
        f"{column} on {name} ({exploration}): {mean:.4f}, published {published}"
    )
