"""The boosters a service can run and the settings only some of them take: read by the
command line (without importing the service) and by :class:`~olboost.serve.config.ServiceConfig`."""

from __future__ import annotations

#: Boosters a service can run: top-k feedback (``topk-*``) or full feedback.
ALGORITHMS = ("topk-adaptive", "topk-bbm", "ada-olmr", "online-bmr")
#: The settings of some boosters only -> the algorithms that take them.
SETTINGS_OF = {
    "exploration": ("topk-adaptive", "topk-bbm"),
    "rho": ("topk-adaptive", "topk-bbm"),
    "gamma": ("topk-bbm", "online-bmr"),
}
