"""Multi-label benchmark data: a MULAN loader and the bundled data sets.

``load("emotions")`` (also ``"scene"``, ``"yeast"``, ``"mediamill-reduced"``) returns a bundled
MULAN data set with its train and test splits, offline. ``load(arff, xml, test=...)`` reads any
MULAN data set from files. The ARFF reader is our own (``olboost.datasets.arff``); it reads dense
and sparse files, plain or gzip-compressed. Sources and citations of the bundled data are in
``olboost/datasets/data/CITATION.md``.

``load_enron_foldering(user, path)`` reads one Enron user's e-mail, labelled by folder, as a
chronological stream of binary bags of words with a growing vocabulary (the data are not bundled;
see :mod:`olboost.datasets.enron`).
"""

from olboost.datasets.arff import ArffAttribute, ArffFile, read_arff
from olboost.datasets.base import MultiLabelDataset
from olboost.datasets.enron import ENRON_USERS, FolderingStream, load_enron_foldering
from olboost.datasets.mulan import BUNDLED, load, load_mulan, read_mulan_labels
from olboost.datasets.synthetic import make_label_stream
from olboost.datasets.uci import BUNDLED_UCI, MulticlassDataset, load_uci

__all__ = [
    "BUNDLED",
    "BUNDLED_UCI",
    "ENRON_USERS",
    "ArffAttribute",
    "ArffFile",
    "FolderingStream",
    "MultiLabelDataset",
    "MulticlassDataset",
    "load",
    "load_enron_foldering",
    "load_mulan",
    "load_uci",
    "make_label_stream",
    "read_arff",
    "read_mulan_labels",
]
