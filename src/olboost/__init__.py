"""olboost: online boosting for multiclass classification and multi-label ranking."""

from olboost._version import __version__

__all__ = ["__version__"]
