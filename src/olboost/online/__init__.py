"""The online-learner layer: the River-style API every olboost estimator shares, committee
booster or not. Its base classes are defined in :mod:`olboost.online.learner`, the input checks
in :mod:`olboost.online.inputs` and the checks of targets in :mod:`olboost.online.labels`.

An :class:`OnlineLearner` owns what does not depend on how it learns: its ``k`` outputs (labels to
rank or classes) and their bookkeeping, the input checks (done completely before any state
changes, so a rejected example leaves the model exactly as it was), its seed and round counter,
the start on the first example, and pickling. :class:`RankingLearner` adds the multi-label ranking
API (``learn_one(x, y)`` with a set, River's ``dict[label, bool]`` or a
:class:`~olboost.feedback.Feedback`, ``score_one``, ``rank_one``, ``predict_one`` and the array
paths ``learn`` / ``score`` / ``score_then_learn``; a ``river.base.MultiLabelClassifier`` when
River is installed), :class:`MulticlassLearner` River's classifier API (``learn_one``,
``predict_proba_one``, ``predict_one``, and for River's mini-batches ``learn_many``,
``predict_many``, ``predict_proba_many``; a ``river.base.MiniBatchClassifier`` when River is
installed) and its array paths.

A learner implements four hooks: ``_init_state()`` (allocate learned state once the outputs and
the number of features are known), ``_raw_scores(xv)`` (its score vector for a checked float64
vector, without changing the model), ``_learn_row(xv, target)`` (learn one checked example) and,
optionally, ``_stream(rows, targets, return_scores)`` (score then learn many rows; by default one
at a time) and ``_missing_allowed()`` (whether it takes missing values; by default not).
Committee boosters (:mod:`olboost.boosters`) are learners; so can be any other online model.

Parameters are checked again when the model starts (they may have changed since construction,
e.g. by River's ``mutate`` or by assignment), before anything is set, together with those of
parameters that are themselves estimators (a booster's committee).

**Missing values.** A learner whose ``_missing_allowed()`` is true takes NaN as a missing value, in
vectors, matrices (dense or sparse) and dicts, where ``None`` and an absent key are missing too.
The features of dict input are fixed by the first example (River's own linear models and trees take
features that appear later; these models, whose weak learners each draw a feature subset at the
start, do not): a later dict may omit some of them (they are missing) and may hold keys not seen
then, which are ignored. (:class:`olboost.LabelRanker` differs: its dicts are sparse
examples, an absent key 0 and an unseen one a new feature; in its DataFrames an absent column
is 0 and an unseen one refused.) A learner started on dicts or named
Series, or on a DataFrame whose column names are strings, reads a matrix by column name (a
DataFrame, its columns in any order, absent and extra ones as a dict's keys), never a plain array
by position. Any other learner rejects NaN, ``None``, and (but for the label ranker) absent and
unexpected keys, naming the key or column. Infinities and magnitudes above
:data:`olboost.online.inputs.MAX_ABS_FEATURE` are always rejected.

**Series and the order of features.** A pandas Series (a DataFrame's row, ``df.iloc[i]``) is read
as the dict of its items where the model reads features by name (or has not started and every label
of the Series' index is a string), else as the vector of its values (with scikit-learn's warning if
its labels are strings); on a model of named features, a Series naming none of them is refused. The
features' order, by which a committee draws each weak learner's feature subset, is a first dict's,
Series' or ``learn_many`` batch's names sorted, as River's dicts have no order, but a first
DataFrame's columns as they stand on the array paths (``learn``, ``score_then_learn``), as
scikit-learn's ``feature_names_in_``: a model started by ``learn(frame)`` and one started by
``learn_many(frame)`` are the same model only if the frame's columns are sorted.
"""

from olboost.online.learner import MulticlassLearner, OnlineLearner, RankingLearner

__all__ = ["MulticlassLearner", "OnlineLearner", "RankingLearner"]
