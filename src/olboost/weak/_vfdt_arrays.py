"""The flat arrays of :class:`olboost.weak.vfdt.VFDTCommittee`: their allocation when the
committee starts and their growth when a learn call runs out of nodes, leaf slots or observer
blocks (the layout is :mod:`olboost.weak._vfdt_kernels`'s)."""

from __future__ import annotations

import numpy as np

from olboost.weak import _vfdt_kernels as K
from olboost.weak._vfdt_bounds import KEEP_MIN_CLASSES, new_kept_sums, no_kept_sums

__all__ = ["TreeArrays"]


class TreeArrays:
    """Allocation and growth of the trees' arrays, mixed into ``VFDTCommittee``: the attributes
    they set are the committee's learned state."""

    def _allocate(self, seed: int | None) -> None:
        # All randomness was drawn by start(); the trees themselves are deterministic.
        n, k, d = self.n_learners_, self.n_labels_, self.n_attributes_
        nominal = dict(self.nominal_attributes or {})
        out_of_range = sorted(col for col in nominal if col >= d)
        if out_of_range:
            raise ValueError(
                f"{type(self).__name__}.nominal_attributes names column(s) {out_of_range} but "
                f"there are only {d} attributes"
            )
        columns = sorted(nominal)
        self.nominal_columns_ = np.asarray(columns, dtype=np.int64)
        self.nominal_cardinality_ = np.asarray([nominal[c] for c in columns], dtype=np.int64)

        features = self.setup_.features
        cardinality = np.zeros(d, dtype=np.int64)
        cardinality[self.nominal_columns_] = self.nominal_cardinality_
        self.n_categories_ = cardinality[features]
        # Each learner's nominal (category, class) counts are packed one feature after another.
        self.nominal_offset_ = np.cumsum(self.n_categories_, axis=1) - self.n_categories_
        n_nominal_cells = int(self.n_categories_.sum(axis=1).max(initial=0))
        self.max_branches_ = int(max(2, self.n_categories_.max(initial=0)))

        n_slots = n * max(1, self.capacity // 2)
        self.node_kind_ = np.zeros((n, self.capacity), dtype=np.int8)
        self.node_feature_ = np.zeros((n, self.capacity), dtype=np.int64)
        self.node_value_ = np.zeros((n, self.capacity), dtype=np.float64)
        self.node_child_ = np.zeros((n, self.capacity), dtype=np.int64)
        self.node_slot_ = np.zeros((n, self.capacity), dtype=np.int64)
        self.n_nodes_ = np.ones(n, dtype=np.int64)
        self.node_slot_[:, 0] = np.arange(n)  # each root is a leaf with slot i

        m = features.shape[1]
        self.leaf_last_ = np.zeros(n_slots)
        # Weight the majority class and naive Bayes predicted right ("nba"; zero otherwise).
        self.leaf_correct_ = np.zeros((n_slots, 2))
        # A leaf's classes are entries of its tree's rows (see K.Leaves): only the classes it
        # met, so that its memory and cost follow them, not k. Each root has MIN_ROOM entries;
        # the rows start with room for about as many leaves as the node arrays hold, so that
        # a growing tree compacts them less often (4 compactions instead of 6 on car's 100
        # trees; each is a return to Python from the compiled loop).
        self.leaf_start_ = np.zeros(n_slots, dtype=np.int64)
        self.leaf_room_ = np.zeros(n_slots, dtype=np.int64)
        self.leaf_room_[:n] = K.MIN_ROOM
        self.leaf_n_present_ = np.zeros(n_slots, dtype=np.int64)
        self._new_entries(K.MIN_ROOM * max(4, self.capacity))
        self.entry_top_ = np.full(n, K.MIN_ROOM, dtype=np.int64)
        self.entry_widest_ = np.zeros(n, dtype=np.int64)
        self.leaf_incomplete_ = np.zeros(n_slots, dtype=np.bool_)
        # The two best features of each leaf's last split attempt, evaluated first at the next
        # one (a hint that changes no result, see K._attempt_split).
        self.leaf_leads_ = np.full((n_slots, 2), -1, dtype=np.int64)
        self.leaf_bound_ = np.full(n_slots, np.inf)  # a cache, see K.Leaves
        self._allocate_kept_sums()
        n_blocks = 2 * n_slots
        self.block_gauss_ = np.zeros((n_blocks, m, K.N_GAUSS_FIELDS))
        self.block_nominal_ = np.zeros((n_blocks, n_nominal_cells))
        # Free slots and blocks wait in shared spare stacks; each learn call lends every tree its
        # own share, so that trees can learn in parallel, and takes back the rest. Roots took
        # slots 0 .. n-1.
        self.spare_slots_ = np.arange(n_slots - 1, n - 1, -1, dtype=np.int64)
        self.spare_slots_ = np.concatenate([self.spare_slots_, np.zeros(n, dtype=np.int64)])
        self.n_spare_slots_ = np.array([n_slots - n], dtype=np.int64)
        self.spare_blocks_ = np.arange(n_blocks - 1, -1, -1, dtype=np.int64)
        self.n_spare_blocks_ = np.array([n_blocks], dtype=np.int64)
        self.free_slots_ = np.zeros((n, 4), dtype=np.int64)
        self.n_free_slots_ = np.zeros(n, dtype=np.int64)
        self.free_blocks_ = np.zeros((n, 4), dtype=np.int64)
        self.n_free_blocks_ = np.zeros(n, dtype=np.int64)
        self.counts_ = np.zeros(n, dtype=np.int64)
        self.progress_ = np.zeros(n, dtype=np.int64)

        self.work_ = np.zeros((n, self.max_branches_ + K.N_WORK_ROWS, k))

    #: The dense rows of ``k`` per slot that committees kept before their leaves held entries,
    #: and the entry rows holding the same statistics (the class lists excepted).
    _DENSE_ROWS = {
        "leaf_class_": "entry_class_", "leaf_obs_": "entry_obs_",
        "leaf_blocks_": "entry_blocks_", "leaf_listed_": "entry_listed_",
    }  # fmt: skip

    def _empty_entries(self, width: int) -> dict[str, np.ndarray]:
        """Empty entry rows, ``width`` per tree, by attribute name."""
        shape = (self.n_learners_, width)
        return {
            "entry_label_": np.zeros(shape, dtype=np.int64),
            "entry_class_": np.zeros(shape),
            "entry_obs_": np.zeros(shape),
            "entry_blocks_": np.full(shape, -1, dtype=np.int64),
            "entry_listed_": np.zeros(shape, dtype=np.bool_),
            "entry_present_": np.zeros(shape, dtype=np.int64),
        }

    def _new_entries(self, width: int) -> None:
        """Start the committee's entry rows empty, ``width`` per tree."""
        self.__dict__.update(self._empty_entries(width))

    def _live_slots(self, i: int) -> np.ndarray:
        """The slots of tree ``i``'s leaves, in node order."""
        nodes = slice(0, int(self.n_nodes_[i]))
        return self.node_slot_[i, nodes][self.node_kind_[i, nodes] == K.LEAF]

    def _compact_entries(self, needed: int) -> None:
        """Move every tree's live leaves' entries to the front of new rows with ``needed`` free
        entries per tree, twice over, and as many again as the most a tree uses: the bound
        grows with the widest leaf, and with ``needed`` free only, nearly every widening of it
        would compact again. A leaf keeps its room and its positions; the entries of split
        leaves, dead since, are dropped."""
        # Everything is built aside and assigned at the end, so that a failed allocation
        # (MemoryError) leaves the committee as it was. One pass over every tree's live
        # leaves at once (a loop over the trees cost 3 ms per call at 100 trees, a fifth of a
        # 1,728-row Adaboost.OLM run on car).
        size = self.node_kind_.shape[1]
        live = (np.arange(size)[None, :] < self.n_nodes_[:, None]) & (self.node_kind_ == K.LEAF)
        trees, nodes = np.nonzero(live)  # tree after tree, each in node order
        slots = self.node_slot_[trees, nodes]
        rooms = self.leaf_room_[slots]
        used = np.bincount(trees, weights=rooms, minlength=self.n_learners_).astype(np.int64)
        tree_start = np.cumsum(used) - used  # where each tree's leaves begin in the pass
        begins = np.cumsum(rooms) - rooms
        starts = self.leaf_start_.copy()
        starts[slots] = begins - tree_start[trees]
        # each live entry: its tree, its new index in the tree's row and its old one
        within = np.arange(int(rooms.sum())) - np.repeat(begins, rooms)
        entry_tree = np.repeat(trees, rooms)
        new_index = np.repeat(starts[slots], rooms) + within
        old_index = np.repeat(self.leaf_start_[slots], rooms) + within
        rows = self._empty_entries(2 * (int(used.max()) + needed))
        for name, row in rows.items():
            row[entry_tree, new_index] = getattr(self, name)[entry_tree, old_index]
        self.__dict__.update(rows)
        self.leaf_start_ = starts
        self.entry_top_ = used

    def _entries_from_dense_rows(self) -> None:
        """Convert the state of a committee pickled before leaves held entries (rows of ``k``
        per slot: ``leaf_class_``, ``leaf_obs_``, ``leaf_blocks_``, ``leaf_listed_``,
        ``leaf_present_``): each live leaf's present classes become its entries, in class
        order. The kept sums, which name entries by position, start afresh (a cache)."""
        dense = {name: self.__dict__.pop(name) for name in (*self._DENSE_ROWS, "leaf_present_")}
        n_slots = len(self.leaf_last_)
        self.leaf_start_ = np.zeros(n_slots, dtype=np.int64)
        self.leaf_room_ = np.zeros(n_slots, dtype=np.int64)
        leaves = [self._live_slots(i) for i in range(self.n_learners_)]
        rooms = [np.maximum(self.leaf_n_present_[slots], K.MIN_ROOM) for slots in leaves]
        self._new_entries(2 * max(int(r.sum()) for r in rooms))
        self.entry_top_ = np.zeros(self.n_learners_, dtype=np.int64)
        self.entry_widest_ = np.zeros(self.n_learners_, dtype=np.int64)
        for i, slots in enumerate(leaves):
            for slot, room in zip(slots.tolist(), rooms[i].tolist(), strict=True):
                n = int(self.leaf_n_present_[slot])
                classes = dense["leaf_present_"][slot, :n]
                start = int(self.entry_top_[i])
                self.leaf_start_[slot], self.leaf_room_[slot] = start, room
                self.entry_label_[i, start : start + n] = classes
                self.entry_present_[i, start : start + n] = np.arange(n)
                for row, entry in self._DENSE_ROWS.items():
                    getattr(self, entry)[i, start : start + n] = dense[row][slot, classes]
                self.entry_top_[i] += room
                self.entry_widest_[i] = max(self.entry_widest_[i], n)
        self._allocate_kept_sums()

    def _dense_leaf_rows(self) -> dict[str, np.ndarray]:
        """The live leaves' entries as rows of ``k`` per slot, as committees stored them before
        leaves held entries (zero, ``-1`` for blocks, in the rows of free slots): the inverse of
        :meth:`_entries_from_dense_rows`, for inspection and tests."""
        n_slots, k = len(self.leaf_last_), self.n_labels_
        rows = {
            "leaf_class_": np.zeros((n_slots, k)),
            "leaf_obs_": np.zeros((n_slots, k)),
            "leaf_blocks_": np.full((n_slots, k), -1, dtype=np.int64),
            "leaf_listed_": np.zeros((n_slots, k), dtype=np.bool_),
            "leaf_present_": np.zeros((n_slots, k), dtype=np.int64),
        }
        for i in range(self.n_learners_):
            for slot in self._live_slots(i).tolist():
                start, n = int(self.leaf_start_[slot]), int(self.leaf_n_present_[slot])
                entries = start + self.entry_present_[i, start : start + n]
                classes = self.entry_label_[i, entries]
                rows["leaf_present_"][slot, :n] = classes
                for row, entry in self._DENSE_ROWS.items():
                    rows[row][slot, classes] = getattr(self, entry)[i, entries]
        return rows

    def _allocate_kept_sums(self) -> None:
        """Each tree's kept sums of its split-attempt bounds at a few leaves
        (:func:`olboost.weak._vfdt_bounds._kept_bounds_of_merits`), none kept yet; ``None``
        when there are too few labels for a leaf to keep them, so that their code is not
        compiled (:func:`olboost.weak._vfdt_bounds.no_kept_sums`)."""
        if self.n_labels_ < KEEP_MIN_CLASSES:
            self.kept_, self.kept_log_, self.kept_acc_ = no_kept_sums()
            return
        self.kept_, self.kept_log_, self.kept_acc_ = new_kept_sums(
            self.n_learners_, self.setup_.features.shape[1], self.n_labels_, self.n_split_points
        )

    def _grow_nodes(self, needed: int) -> None:
        size = self.node_kind_.shape[1]
        while size < needed:
            size *= 2
        for name in ("node_kind_", "node_feature_", "node_value_", "node_child_", "node_slot_"):
            old = getattr(self, name)
            new = np.zeros((old.shape[0], size), dtype=old.dtype)
            new[:, : old.shape[1]] = old
            setattr(self, name, new)

    def _grow_pool(self, arrays: tuple[str, ...], spare: str) -> None:
        """Grow a pool (leaf slots or observer blocks) by half, the new items becoming spare."""
        size = getattr(self, arrays[0]).shape[0]
        new_size = size + max(size // 2, 1)
        for name in arrays:
            old = getattr(self, name)
            new = np.zeros((new_size,) + old.shape[1:], dtype=old.dtype)
            new[:size] = old
            setattr(self, name, new)
        n_spare = getattr(self, "n_" + spare)
        stack = np.zeros(new_size, dtype=np.int64)
        stack[: new_size - size] = np.arange(new_size - 1, size - 1, -1)
        stack[new_size - size : new_size - size + n_spare[0]] = getattr(self, spare)[: n_spare[0]]
        setattr(self, spare, stack)
        n_spare[0] += new_size - size

    def _grown_arrays(self) -> tuple[np.ndarray, ...]:
        """One array of each kind that growth replaces (nodes, slots, blocks, the two free
        lists): a :meth:`_state` built earlier is current while these are the same objects."""
        return (
            self.node_kind_, self.leaf_last_, self.block_gauss_, self.free_slots_,
            self.free_blocks_, self.entry_label_,
        )  # fmt: skip

    _POOLS = {
        "slots": (
            "leaf_last_",
            "leaf_correct_",
            "leaf_start_",
            "leaf_room_",
            "leaf_n_present_",
            "leaf_incomplete_",
            "leaf_leads_",
            "leaf_bound_",
        ),
        "blocks": ("block_gauss_", "block_nominal_"),
    }

    def _grow_for(self, kind: str, status: int) -> None:
        """Make room after :func:`K.lend` failed with ``status`` on pool ``kind``."""
        if status == K.LEND_NO_SPARE:
            self._grow_pool(self._POOLS[kind], f"spare_{kind}_")
            return
        old = getattr(self, f"free_{kind}_")
        new = np.zeros((old.shape[0], 2 * old.shape[1]), dtype=np.int64)
        new[:, : old.shape[1]] = old
        setattr(self, f"free_{kind}_", new)
