"""The state layout of the compiled Hoeffding trees (:mod:`olboost.weak._vfdt_kernels`): node
kinds, the fields of observer blocks and scratch rows, leaf prediction modes, and the named records
the kernels take."""

from __future__ import annotations

import math
from collections import namedtuple

#: ``max_depth=None``: no tree ever reaches this depth.
NO_DEPTH_LIMIT = 2**62

# Node kinds.
LEAF = 0
NUMERIC_LE = 1  # branch 0 when x[f] <= value, else branch 1
NOMINAL_EQ = 2  # branch 0 when x[f] == value, else branch 1
NOMINAL_MULTIWAY = 3  # branch x[f]
EMPTY = 4  # a multiway branch whose category was unseen at split time; no leaf yet
NO_SPLIT = -1  # the null split (or a splitter with no valid candidate)
MISSING = -1  # the child ``_branch`` returns when the split attribute's value is missing

# Fields of gauss[block, feature].
G_MEAN = 0
G_SSD = 1  # Welford's running sum of squared deviations
G_MIN = 2
G_MAX = 3
G_WEIGHT = 4  # weight of the examples whose value was present (the class's weight if none missed)
N_GAUSS_FIELDS = 5

# Scratch rows at the end of ``work`` (the first rows hold branch class weights).
W_MU = -1
W_SIGMA = -2
W_LO = -3
W_HI = -4
W_NLOGN = -5
W_N = -6  # per-class weight seen by one attribute's observer
W_NLOGN_F = -7  # n log2 n of W_N
N_WORK_ROWS = 7

# The committee's state, as the compiled kernels take it: named records of arrays (Numba types a
# namedtuple by its field names and types, so each field is read by name, at no cost).
Learners = namedtuple(
    "Learners",
    [
        "features",  # (N, m) columns each tree sees
        "n_categories",  # (N, m) categories of each seen column (0: numeric)
        "nominal_offset",  # (N, m) first cell of each nominal column in an observer block
        "weight_multiplier",  # (N,)
        "grace_period",  # (N,)
        "split_confidence",  # (N,)
        "tie_threshold",  # (N,)
    ],
)
Options = namedtuple(
    "Options",
    [
        "n_split_points",
        "min_branch_fraction",
        "max_share_to_split",
        "leaf_mode",  # MC, NB, NBA or MC_WEKA
        "binary_nominal",  # binary x == v candidates besides the multiway split
        "weka",  # the Weka port's rules
        "leaf_prior",
        "nb_threshold",
        "max_depth",  # a leaf this deep is deactivated (River's max_depth); NO_DEPTH_LIMIT: none
    ],
)
Nodes = namedtuple("Nodes", ["kind", "feature", "value", "child", "slot", "n_nodes"])
Leaves = namedtuple(
    "Leaves",
    [
        "last_attempt",  # per slot: weight seen at the last split attempt
        # A leaf's classes are entries of its tree's entry rows (N, .): those of slot ``s`` of
        # tree ``i`` at ``start[s] .. start[s] + room[s] - 1``, the first ``n_present[s]`` used,
        # in the order the leaf met them; a position never moves while the leaf lives.
        "start",  # (slots,)
        "room",  # (slots,)
        "label",  # (N, entries) the class of each entry
        "class_weight",  # (N, entries)
        "observed",  # (N, entries) weight seen by the observers
        "blocks",  # (N, entries) observer block of each entry, -1 if none
        "gauss",  # (blocks, m, N_GAUSS_FIELDS)
        "nominal",  # (blocks, nominal cells)
        "free_slots",  # (N, .) slots lent to each tree
        "n_free_slots",  # (N,)
        "free_blocks",  # (N, .) blocks lent to each tree
        "n_free_blocks",  # (N,)
        "listed",  # (N, entries) whether the leaf lists the entry's class
        "correct",  # (slots, 2) correctness weights (adaptive naive Bayes)
        # (N, entries) a leaf's entry positions in increasing class order, first n_present: the
        # order of every per-class loop, so that sums run as over a dense row
        "present",
        "n_present",  # (slots,)
        "incomplete",  # (slots,) the leaf's observers skipped a missing value since their reset
        "leads",  # (slots, 2) best and second best feature of the last split attempt (a hint)
        # (slots,) an upper bound of the sum of a leaf's class weights, infinite when unknown:
        # a cache that spares the grace period's sum while it cannot reach the grace (see
        # _vfdt_kernels._learn_trees)
        "seen_bound",
        "top",  # (N,) first unused entry of each tree's rows
        "widest",  # (N,) at least the most classes a live leaf of the tree holds
        # Per tree, the sums of its split-attempt bounds at a few leaves (_vfdt_bounds; a cache
        # that changes no result; None when no leaf can hold enough classes):
        "kept",  # (N, .) int64: kept leaves, log of updates, counts, flags (_vfdt_bounds)
        "kept_log",  # (N, LOG_LENGTH, m, N_GAUSS_FIELDS) the logged records before each update
        "kept_acc",  # (N, KEPT_LEAVES, m, 6, scratch columns) each kept feature's sums
    ],
)
Pools = namedtuple(
    "Pools",
    [
        "spare_slots",
        "n_spare_slots",
        "spare_blocks",
        "n_spare_blocks",
        "counts",
        # (N,) int64: where each tree resumes, in the example's list of weighed labels, a learn
        # call that stopped for class entries (_vfdt_kernels.LEARN_GROW_ENTRIES); 0 between calls
        "progress",
        "max_branches",
    ],
)
State = namedtuple("State", ["learners", "options", "nodes", "leaves", "pools", "work"])

# Entries a new leaf has room for at least (its room doubles as it meets classes).
MIN_ROOM = 4

# Leaf prediction modes.
MC = 0  # majority class
NB = 1  # naive Bayes
NBA = 2  # adaptive naive Bayes
MC_WEKA = 3  # majority class as the Weka port predicts: listed classes' weights, 1 for the others

# Columns of the per-slot correctness weights (adaptive naive Bayes).
C_MC = 0
C_NB = 1

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_TAU = 0.5 * math.log(math.tau)
