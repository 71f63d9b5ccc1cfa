"""Linear online label rankers (Shalev-Shwartz & Singer, "A Unified Algorithmic Approach for
Efficient Online Label Ranking", AISTATS 2007).

:class:`LabelRanker` keeps one weight vector per label and ascends the dual of the competitor's
problem with Update I, II or III under the squared norm or the entropy;
:func:`ranking_mistakes` marks the trials the paper counts as prediction mistakes. Compiled
kernels: :mod:`olboost.rankers._dual` (the per-label pieces of the dual, Update II),
:mod:`olboost.rankers._pdip` (Update III's interior point method) and
:mod:`olboost.rankers._kernels` (scoring and trials over CSR rows).
"""

from olboost.rankers.label_ranker import LabelRanker, ranking_mistakes

__all__ = ["LabelRanker", "ranking_mistakes"]
