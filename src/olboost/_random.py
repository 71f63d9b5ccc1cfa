"""Counter-based random numbers for compiled code.

A booster's random choices at step ``t`` (Hedge's expert draw) are a pure function of the model's
seed and ``t``: ``uniform(key, t)``. Scoring the same example twice therefore gives the same answer,
scoring never changes the model, and a pickled model resumes exactly where it stopped.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "MAX_KEY",
    "STREAMS",
    "counter_uniform",
    "draw_key",
    "seed_int",
    "seed_key",
    "stream_rng",
]

#: Largest draw key: keys are unsigned 64-bit integers (``np.uint64``).
MAX_KEY = 2**64 - 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@numba.njit(cache=True)
def _splitmix64(z: np.uint64) -> np.uint64:
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def counter_uniform(key: np.uint64, counter: np.int64) -> float:
    """A uniform number in [0, 1) determined by ``(key, counter)`` (SplitMix64, 53 bits)."""
    z = _splitmix64(key ^ _splitmix64(np.uint64(counter)))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def draw_key(key: np.uint64, t: np.int64, extra: np.uint64) -> np.uint64:
    """The key of the draws of round ``t`` under a caller-given ``extra`` key (e.g. one per
    request of a service): ``counter_uniform(draw_key(key, t, extra), j)``, ``j = 0, 1, ...``,
    are independent uniforms for distinct ``(t, extra)``, and the same ones on a replay."""
    return _splitmix64(_splitmix64(key ^ _splitmix64(np.uint64(t))) ^ _splitmix64(extra))


def seed_key(seed: int, *path: int) -> np.uint64:
    """A 64-bit key for one named random stream of a model seeded with ``seed``: ``path`` names the
    stream (a stream key of :data:`STREAMS`, then sub-stream indices, e.g. one per booster)."""
    ss = np.random.SeedSequence([seed, *path])
    return np.uint64(ss.generate_state(1, dtype=np.uint64)[0])


def seed_int(seed: int, *path: int) -> int:
    """A 32-bit seed for the stream ``path`` of ``seed`` (for seeding a generator or a
    committee)."""
    return int(np.random.SeedSequence([seed, *path]).generate_state(1)[0])


def stream_rng(seed: int, *path: int) -> np.random.Generator:
    """A NumPy generator for the stream ``path`` of ``seed`` (e.g. the Monte Carlo draws of
    round ``t``: ``stream_rng(seed, STREAMS["monte_carlo"], t)``)."""
    return np.random.default_rng([seed, *path])


#: The stream keys of a model seed, one per independent use of randomness; every model derives
#: its random streams from its seed through these, so that no two uses share draws.
STREAMS = {
    "committee": 1,
    "hedge": 2,
    "monte_carlo": 3,
    "monte_carlo_vote": 4,
    "tie": 5,
    "exploration": 6,
}
