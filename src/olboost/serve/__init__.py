"""A live top-k ranking service: ``olboost serve`` and its simulated users, ``olboost simulate``.

* :mod:`olboost.serve.service`: the model, its log writer and learner threads, request checks
  (no web framework);
* :mod:`olboost.serve.store`: the SQLite log (WAL) and the atomic checkpoints, recovery and replay;
* :mod:`olboost.serve.app`: the Starlette application and the uvicorn runner (the ``serve``
  extra: ``pip install 'olboost[serve]'``);
* :mod:`olboost.serve.simulate`: the client that plays users of a data set;
* :mod:`olboost.serve.commands`: the ``olboost serve`` and ``olboost simulate`` commands.

``import olboost`` does not import this package, and this package imports Starlette and uvicorn
only in :mod:`olboost.serve.app`.
"""

__all__ = ["app", "commands", "service", "simulate", "store"]
