"""A live top-k ranking service: ``olboost serve`` and its simulated users, ``olboost simulate``.

* :mod:`olboost.serve.service`: the model behind its lock, ranking and feedback (no web
  framework), with its log writer and learner threads (:mod:`._log_writer`, :mod:`._learner`);
* :mod:`olboost.serve.config`: the service's configuration and model;
* :mod:`olboost.serve.requests`: the checks of a request's body;
* :mod:`olboost.serve.stats`: counters, the status page's series and ``/metrics``;
* :mod:`olboost.serve.store`: the SQLite log (WAL) and the atomic checkpoints, recovery and replay;
* :mod:`olboost.serve.app`: the Starlette application and the uvicorn runner (the ``serve``
  extra: ``pip install 'olboost[serve]'``);
* :mod:`olboost.serve.simulate`: the client that plays users of a data set;
* :mod:`olboost.serve.commands`: the ``olboost serve`` and ``olboost simulate`` commands.

``import olboost`` does not import this package, and this package imports Starlette and uvicorn
only in :mod:`olboost.serve.app`.
"""

__all__ = ["app", "commands", "config", "requests", "service", "simulate", "stats", "store"]
