"""What a service runs: its configuration (:class:`ServiceConfig`, fixed when its store is
created) and the model built, started and warmed up from it."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from olboost.serve._algorithms import ALGORITHMS, SETTINGS_OF
from olboost.serve._fused import fused_learner
from olboost.serve.store import Store, refuse_a_file, refuse_a_lost_log

#: Random features per tree when not given (capped at the width of the feature vectors).
DEFAULT_FEATURES = 20


def _difference(stored: Any, given: Any) -> str:
    """``(stored, given)`` of one setting as an error names it: their repr, unless both are
    sequences and one is long (the labels of a ``--labels-file`` can be thousands): then their
    lengths and the first place where they differ (the whole of both was the error line, 400 kB
    for 20,000 labels)."""
    sequences = all(isinstance(v, tuple | list) for v in (stored, given))
    if not sequences or max(len(stored), len(given)) <= 10:
        return repr((stored, given))
    shorter = min(len(stored), len(given))
    at = next((i for i in range(shorter) if stored[i] != given[i]), shorter)
    first = f"{stored[at]!r} stored, {given[at]!r} given" if at < shorter else "one ends there"
    return f"<{len(stored)} stored, {len(given)} given; item {at + 1} differs: {first}>"


class NotText(ValueError):
    """Why a file's bytes are no text that :func:`decode_text` reads: ``reason``, and the
    1-based ``line`` it is on (``None``: the whole file)."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason, self.line = reason, line

    def named(self, what: str) -> str:
        """The message, ``what`` (an option and its file) first."""
        return f"{what}, line {self.line}: {self.reason}" if self.line else f"{what}: {self.reason}"


def decode_text(raw: bytes) -> str:
    """The text of a file an operator wrote (``--token-file``, ``--labels-file``): UTF-8, with
    or without a byte-order mark, or UTF-16 or UTF-32 with one, the forms Windows' editors and
    PowerShell write. Raises :class:`NotText`, for wide text without a mark too (its byte
    order is a guess; read as UTF-8 it was names with a NUL between the letters)."""
    from olboost.datasets._text import _WIDE_BOMS, _wide_encoding

    wide = _wide_encoding(raw)
    if wide is not None:
        if not raw.startswith(tuple(bom for bom, _ in _WIDE_BOMS)):
            raise NotText(f"{wide} text without a byte-order mark (save it as UTF-8)")
        try:
            return raw.decode(wide)  # the codec reads the mark (UTF-32's LE one first) and drops it
        except UnicodeDecodeError:
            raise NotText(f"not {wide} text, as its start says") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise NotText("not UTF-8 text", raw.count(b"\n", 0, err.start) + 1) from None


@dataclass(frozen=True)
class ServiceConfig:
    """What defines a service's model: fixed when its store is created.

    Attributes
    ----------
    algorithm
        One of :data:`ALGORITHMS`.
    labels
        The label set (strings), in the model's order.
    n_features
        Width of a feature vector.
    feature_names
        Names for features given as a JSON object (``None``: lists only).
    learners, seed, k, exploration, rho, gamma, features, max_depth
        The booster's parameters (``features``: random features per tree, at most
        ``n_features``; the default, 20, is capped at ``n_features``; ``max_depth``: the trees'
        depth limit, ``None`` for none); ``k`` is also the number of labels shown by a
        full-feedback model.
    """

    algorithm: str
    labels: tuple[str, ...]
    n_features: int
    feature_names: tuple[str, ...] | None = None
    learners: int = 100
    seed: int = 1
    k: int = 3
    exploration: str = "uniform"
    rho: float = 0.02
    gamma: float = 0.1
    features: int = DEFAULT_FEATURES
    # last, with a default: a store created before it reads as None, no limit
    max_depth: int | None = None

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}"
            )
        labels = tuple(self.labels)
        counts = collections.Counter(labels)
        repeated = sorted({label for label in labels if counts[label] > 1}, key=str)
        if repeated:
            raise ValueError(f"labels: {', '.join(map(repr, repeated))} given more than once")
        if len(labels) < 2:
            raise ValueError(f"labels: at least 2 labels are needed, got {len(labels)}")
        if not all(isinstance(label, str) and label for label in labels):
            raise ValueError("labels must be non-empty strings")
        _check_text(labels, "labels")
        object.__setattr__(self, "labels", labels)
        for name, takers in SETTINGS_OF.items():
            default = _default(name)
            value = getattr(self, name)
            # stored and compared with a store's, a setting the model never reads (nan too)
            if self.algorithm not in takers and not (value is default or value == default):
                raise ValueError(
                    f"{name}={value!r}: {self.algorithm} takes no {name} (a setting of "
                    f"{', '.join(takers)})"
                )
        if (
            isinstance(self.n_features, bool)
            or not isinstance(self.n_features, int)
            or self.n_features < 1
        ):
            raise ValueError(f"n_features must be an integer >= 1, got {self.n_features!r}")
        if self.feature_names is not None:
            names = tuple(self.feature_names)
            if len(names) != self.n_features or len(set(names)) != len(names):
                raise ValueError(f"feature_names: {self.n_features} distinct names are needed")
            _check_text(names, "feature_names")
            object.__setattr__(self, "feature_names", names)
        if self.features != DEFAULT_FEATURES and self.features > self.n_features:
            # stored, then capped silently: the store's configuration said what no tree saw
            raise ValueError(
                f"features={self.features}: the feature vectors have {self.n_features}, so a "
                f"tree sees at most {self.n_features}"
            )
        # a top-k booster learns from pairs of shown labels: 2 at least (its own check says so
        # for k=1; a k above the labels said [1, m] here)
        least = 2 if self.topk else 1
        if not least <= self.k <= len(labels):
            # "k=3 must be in [2, 2] labels" named a k the user never gave: the default's
            raise ValueError(
                f"k={self.k} must be in [{least}, {len(labels)}] labels (k: the labels shown on "
                f"top, --k, 3 by default; the service has {len(labels)} labels)"
            )
        # the model's own checks (learners, features, rho, gamma, k for the exploration ...): a
        # bad setting is refused here, before a store or a server exists
        build_model(self)._check_params()

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["labels"] = list(self.labels)
        out["feature_names"] = None if self.feature_names is None else list(self.feature_names)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServiceConfig:
        data = dict(data)
        for name, takers in SETTINGS_OF.items():
            if data.get("algorithm") not in takers and name in data:
                # a store created (in Python) before they were refused: a setting its model
                # never read, at its default
                data[name] = _default(name)
        return cls(**data)

    @property
    def topk(self) -> bool:
        """Whether the model learns from top-k feedback (clicks on the shown labels only)."""
        return self.algorithm.startswith("topk-")


def _check_text(names: tuple, what: str) -> None:
    """Refuse a name that no UTF-8 text holds (a lone surrogate: bytes of a command line or a
    file decoded under a non-UTF-8 locale). Stored, it made every JSON answer of the service
    a 500, after a restart too."""
    for name in names:
        if isinstance(name, str):
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    f"{what}: {name!r} is not Unicode text (a lone surrogate: bytes that are not "
                    "UTF-8, read under a locale that is not UTF-8?)"
                ) from None


def _default(name: str) -> Any:
    """The default of the setting ``name`` of :class:`ServiceConfig`."""
    return ServiceConfig.__dataclass_fields__[name].default


def build_model(config: ServiceConfig) -> Any:
    """A fresh, unstarted booster of ``config`` on compiled Hoeffding trees."""
    from olboost import AdaOLMR, OnlineBMR, TopkAdaptive, TopkBBM, VFDTCommittee

    committee = VFDTCommittee(
        n_features=min(config.features, config.n_features), max_depth=config.max_depth
    )
    common = {"learners": config.learners, "seed": config.seed, "labels": list(config.labels)}
    topk = {"k": config.k, "exploration": config.exploration, "rho": config.rho}
    if config.algorithm == "topk-adaptive":
        return TopkAdaptive(committee, **common, **topk)
    if config.algorithm == "topk-bbm":
        return TopkBBM(committee, **common, **topk, gamma=config.gamma)
    if config.algorithm == "ada-olmr":
        return AdaOLMR(committee, **common)
    return OnlineBMR(committee, **common, gamma=config.gamma)


def start_model(model: Any, config: ServiceConfig) -> None:
    """Start ``model`` (fix its features, labels and seed) before any request, so that the
    model a store begins with, its id included, is in ``initial.olb``."""
    model._start(config.n_features, None)


def resolve_config(path: Path, config: ServiceConfig | None) -> ServiceConfig:
    """The configuration of the store at ``path``: the stored one, which ``config`` must equal
    if given, or ``config`` for a new store (``ValueError`` otherwise, naming the differences)."""
    if config is not None and not isinstance(config, ServiceConfig):
        raise TypeError(f"config must be a ServiceConfig or None, got {type(config).__name__}")
    refuse_a_file(path)
    refuse_a_lost_log(Path(path))
    if config is None and not Store.exists(path):
        # refused before Store() creates the directory and an empty log: a mistyped --store
        # left them behind
        raise ValueError(
            f"{path}: a new store needs a configuration (--dataset, or --labels and --n-features)"
        )
    # each thread opens its own connection (sqlite3 objects stay in their thread)
    store = Store(path)
    try:
        stored = store.config()
    finally:
        store.close()
    if stored is not None:
        stored_config = ServiceConfig.from_json(stored)
        if config is not None and config != stored_config:
            named = ", ".join(
                f"{name!r}: {_difference(value, getattr(config, name))}"
                for name, value in asdict(stored_config).items()
                if getattr(config, name) != value
            )
            raise ValueError(
                f"{path}: the store was created with other settings (stored, given): {{{named}}}"
            )
        config = stored_config
    elif config is None:
        raise ValueError(
            f"{path}: a new store needs a configuration (--dataset, or --labels and --n-features)"
        )
    return config


def warm_up_model(model: Any, config: ServiceConfig) -> None:
    """Run a copy of ``model`` through a show and a learn, so that the kernels are
    compiled (or loaded from Numba's cache) before the first request is timed."""
    from olboost.checkpoint import dumps, loads

    clone = loads(dumps(model))
    x = np.zeros(config.n_features)
    if config.topk:
        impression = clone.show_one(x, key=0)
        feedback = impression.feedback([impression.labels[0]])
        fused = fused_learner(clone)
        if fused is not None:
            fused.show(x, 0)  # the rankings' one call, before the learn that waits
            fused.learn(x, feedback)
        else:
            clone.learn_one(x, feedback)
    else:
        clone.rank_one(x)
        clone.learn_one(x, {config.labels[0]})
    clone.score_one(x)
