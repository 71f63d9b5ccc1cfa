"""Tests of olboost.datasets.uci: the bundled UCI multiclass sets and the HAR loader."""

from __future__ import annotations

import gzip
import re
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from olboost.datasets import BUNDLED_UCI, MulticlassDataset, load_uci

# The benchmark files live next to the repository (../shared); a user's clone has no such folder.
SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
UCI_DATA = resources.files("olboost.datasets") / "data" / "uci"
HAR = "puc_rio_har/dataset-har-PUC-Rio-ugulino.csv.gz"
HAR_BAD_LINE = 122078  # data row 122077 plus the header line
HAR_CLASSES = {
    "sitting": 50631,
    "standing": 47370,
    "walking": 43390,
    "standingup": 12415,
    "sittingdown": 11827,
}


def need_shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found: the shared benchmark files are only in the dev tree")
    return SHARED


# name -> (rows, features, class counts) as counted in PROVENANCE.md
EXPECTED = {
    "balance": (625, 4, {"B": 49, "L": 288, "R": 288}),
    "car": (1728, 6, {"unacc": 1210, "acc": 384, "good": 69, "vgood": 65}),
    "mushroom": (8124, 22, {"e": 4208, "p": 3916}),
    "nursery": (
        12960,
        8,
        {
            "not_recom": 4320,
            "priority": 4266,
            "spec_prior": 4044,
            "very_recom": 328,
            "recommend": 2,
        },
    ),
    "mice": (
        1080,
        77,
        {
            "c-CS-m": 150,
            "c-SC-m": 150,
            "c-CS-s": 135,
            "c-SC-s": 135,
            "t-CS-m": 135,
            "t-SC-m": 135,
            "t-SC-s": 135,
            "t-CS-s": 105,
        },
    ),
}

SOURCES = {
    "balance-scale.data.gz": "uci_balance_scale/balance-scale.data",
    "car.data.gz": "uci_car/car.data",
    "car.names.gz": "uci_car/car.names",
    "agaricus-lepiota.data.gz": "uci_mushroom/agaricus-lepiota.data",
    "agaricus-lepiota.names.gz": "uci_mushroom/agaricus-lepiota.names",
    "nursery.data.gz": "uci_nursery/nursery.data",
    "Data_Cortex_Nuclear.derived.csv.gz": "uci_mice_protein/Data_Cortex_Nuclear.derived.csv",
}


@pytest.fixture(scope="module")
def bundled() -> dict[str, MulticlassDataset]:
    return {name: load_uci(name) for name in BUNDLED_UCI}


@pytest.mark.parametrize("name", BUNDLED_UCI)
def test_counts_match_provenance(bundled: dict[str, MulticlassDataset], name: str) -> None:
    ds = bundled[name]
    rows, features, counts = EXPECTED[name]
    assert (ds.n_samples, ds.n_features, len(ds)) == (rows, features, rows)
    assert ds.class_counts() == counts
    assert ds.n_classes == len(counts)
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    assert ds.X.shape == (rows, features) and ds.y.shape == (rows,)
    assert set(np.unique(ds.y)) == set(range(ds.n_classes))
    assert not np.isnan(ds.X).any()  # the default "paper" handling leaves no NaN
    assert ds.name == name


def test_class_names_in_order_of_first_appearance(bundled: dict[str, MulticlassDataset]) -> None:
    assert bundled["balance"].class_names == ["B", "R", "L"]
    assert bundled["car"].class_names == ["unacc", "acc", "vgood", "good"]
    assert bundled["mushroom"].class_names == ["p", "e"]
    assert bundled["nursery"].class_names[0] == "recommend"
    for ds in bundled.values():
        assert ds.y[0] == 0 and np.all(np.diff(np.maximum.accumulate(ds.y)) <= 1)


def test_balance_is_numeric(bundled: dict[str, MulticlassDataset]) -> None:
    ds = bundled["balance"]
    assert ds.nominal == {} and ds.missing == "none"
    assert ds.feature_names == ["left-weight", "left-distance", "right-weight", "right-distance"]
    # B,1,1,1,1 / R,1,1,1,2 / ... / L,5,5,5,4 ; the class is the sign of LW*LD - RW*RD.
    assert ds.X[0].tolist() == [1.0, 1.0, 1.0, 1.0] and ds.class_names[ds.y[0]] == "B"
    torque = ds.X[:, 0] * ds.X[:, 1] - ds.X[:, 2] * ds.X[:, 3]
    names = np.array(ds.class_names)[ds.y]
    assert np.all(names == np.where(torque > 0, "L", np.where(torque < 0, "R", "B")))


NURSERY_FIRST = "usual,proper,complete,1,convenient,convenient,nonprob,recommended,recommend"
NURSERY_LAST = "great_pret,very_crit,foster,more,critical,inconv,problematic,not_recom,not_recom"


def _decoded(ds: MulticlassDataset, i: int) -> list[str]:
    return [ds.nominal[j][int(v)] for j, v in enumerate(ds.X[i])]


@pytest.mark.parametrize(
    ("name", "row", "line"),
    [
        ("car", 0, "vhigh,vhigh,2,2,small,low,unacc"),
        ("car", 1727, "low,low,5more,more,big,high,vgood"),
        ("mushroom", 0, "p,x,s,n,t,p,f,c,n,k,e,e,s,s,w,w,p,w,o,p,k,s,u"),
        ("mushroom", 3, "p,x,y,w,t,p,f,c,n,n,e,e,s,s,w,w,p,w,o,p,k,s,u"),
        ("nursery", 0, NURSERY_FIRST),
        ("nursery", 12959, NURSERY_LAST),
    ],
)
def test_nominal_codes_round_trip(
    bundled: dict[str, MulticlassDataset], name: str, row: int, line: str
) -> None:
    ds = bundled[name]
    fields = line.split(",")
    label = fields.pop(0 if name == "mushroom" else -1)
    assert _decoded(ds, row) == fields
    assert ds.class_names[ds.y[row]] == label
    assert set(ds.nominal) == set(range(ds.n_features))


@pytest.mark.parametrize("name", ["car", "mushroom", "nursery"])
def test_every_row_round_trips(bundled: dict[str, MulticlassDataset], name: str) -> None:
    ds = bundled[name]
    file = {"mushroom": "agaricus-lepiota.data.gz"}.get(name, f"{name}.data.gz")
    with gzip.open(UCI_DATA / file, "rt") as f:
        lines = [line for line in f.read().split("\n") if line]
    assert len(lines) == ds.n_samples
    for i in range(0, ds.n_samples, 97):
        fields = lines[i].split(",")
        label = fields.pop(0 if name == "mushroom" else -1)
        assert _decoded(ds, i) + [ds.class_names[ds.y[i]]] == fields + [label]


def test_nominal_cardinalities(bundled: dict[str, MulticlassDataset]) -> None:
    car = bundled["car"]
    assert car.nominal_cardinalities == {0: 4, 1: 4, 2: 4, 3: 3, 4: 3, 5: 3}
    assert car.nominal[2] == ["2", "3", "4", "5more"]  # raw strings, not the .names spellings
    assert list(bundled["nursery"].nominal_cardinalities.values()) == [3, 5, 4, 4, 3, 2, 3, 3]
    mush = bundled["mushroom"]
    assert mush.nominal[mush.feature_names.index("veil-type")] == ["p"]  # "u" never occurs


def test_mushroom_missing(bundled: dict[str, MulticlassDataset]) -> None:
    ds = bundled["mushroom"]
    col = ds.feature_names.index("stalk-root")
    assert col == 10
    cats = ds.nominal[col]
    assert "?" in cats and len(cats) == 5  # b, c, e, r and "?"
    assert int(np.count_nonzero(ds.X[:, col] == cats.index("?"))) == 2480
    assert "2480" in ds.missing and "'?'" in ds.missing

    nan = load_uci("mushroom", missing="nan")
    assert "?" not in nan.nominal[col] and len(nan.nominal[col]) == 4
    assert int(np.isnan(nan.X).sum()) == 2480 and np.isnan(nan.X[:, col]).sum() == 2480
    ok = ~np.isnan(nan.X[:, col])
    decoded_nan = [nan.nominal[col][int(c)] for c in nan.X[ok, col]]
    decoded = [cats[int(c)] for c in ds.X[ok, col]]
    assert decoded_nan == decoded
    assert "NaN" in nan.missing


def test_mice(bundled: dict[str, MulticlassDataset]) -> None:
    ds = bundled["mice"]
    assert ds.n_features == 77 and ds.nominal == {}
    for dropped in ("MouseID", "Genotype", "Treatment", "Behavior", "class"):
        assert dropped not in ds.feature_names
    assert ds.feature_names[0] == "DYRK1A_N" and ds.feature_names[-1] == "CaNA_N"
    assert not np.isnan(ds.X).any()
    assert ds.X[0, 0] == pytest.approx(0.503643884)
    assert "1396" in ds.missing and "replaced by 0" in ds.missing

    nan = load_uci("mice", missing="nan")
    assert int(np.isnan(nan.X).sum()) == 1396
    assert np.all(ds.X[np.isnan(nan.X)] == 0.0)
    known = ~np.isnan(nan.X)
    np.testing.assert_array_equal(ds.X[known], nan.X[known])
    np.testing.assert_array_equal(ds.y, nan.y)


def test_shuffled(bundled: dict[str, MulticlassDataset]) -> None:
    ds = bundled["car"]
    a, b, c = ds.shuffled(1), ds.shuffled(1), ds.shuffled(2)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    assert a.class_names == ds.class_names and a.nominal == ds.nominal
    assert a.class_counts() == ds.class_counts()

    # A permutation: every original row (as a bytes key with its label) appears exactly once.
    def rows(d: MulticlassDataset) -> list[bytes]:
        return sorted(x.tobytes() + bytes([y]) for x, y in zip(d.X, d.y, strict=True))

    assert rows(a) == rows(ds) and rows(c) == rows(ds)
    assert not np.array_equal(a.X, ds.X)
    assert ds.X[0].tolist() == load_uci("car").X[0].tolist()  # the original is untouched
    assert any("seed" in note or "default_rng(1)" in note for note in a.notes)


def test_head_iter_and_merge(bundled: dict[str, MulticlassDataset]) -> None:
    ds = bundled["nursery"]
    h = ds.head(3)
    assert len(h) == 3 and h.class_names == ds.class_names
    items = list(h)
    assert [label for _, label in items] == ["recommend", "priority", "not_recom"]
    x, _ = items[0]
    assert x.dtype == np.float64 and x.shape == (8,)
    x[:] = -1  # a copy
    assert h.X[0, 0] == 0.0
    assert len(ds.head(10**9)) == ds.n_samples
    with pytest.raises(ValueError, match="n must be"):
        ds.head(-1)

    four = ds.merge_classes({"recommend": "very_recom"})
    assert four.n_classes == 4 and four.n_samples == 12960
    assert four.class_counts()["very_recom"] == 330
    assert four.class_names == ["priority", "not_recom", "very_recom", "spec_prior"]
    with pytest.raises(ValueError, match="not a class"):
        ds.merge_classes({"nope": "priority"})


def test_dataset_validation() -> None:
    with pytest.raises(ValueError, match="rows"):
        MulticlassDataset("t", np.zeros((2, 1)), np.zeros(3, dtype=int), ["a"], ["c"])
    with pytest.raises(ValueError, match="class codes"):
        MulticlassDataset("t", np.zeros((1, 1)), np.array([1]), ["a"], ["c"])
    with pytest.raises(ValueError, match="nominal column 0"):
        MulticlassDataset("t", np.array([[2.0]]), np.array([0]), ["a"], ["c"], {0: ["x", "y"]})


def test_bundled_files_identical_to_shared() -> None:
    shared = need_shared()
    for bundled_name, source in SOURCES.items():
        with gzip.open(UCI_DATA / bundled_name, "rb") as f:
            assert f.read() == (shared / source).read_bytes(), bundled_name


def test_bundled_files_are_reproducible_gzip() -> None:
    for bundled_name in SOURCES:
        packed = (UCI_DATA / bundled_name).read_bytes()
        # gzip -9 -n: no file name or time stamp in the header.
        assert packed[:2] == b"\x1f\x8b" and packed[4:8] == b"\0\0\0\0", bundled_name
        assert not packed[3] & 0x08, bundled_name
    assert sorted(p.name for p in Path(str(UCI_DATA)).iterdir()) == sorted(SOURCES)


def test_citation_present() -> None:
    text = (resources.files("olboost.datasets") / "data" / "CITATION.md").read_text(
        encoding="utf-8"
    )
    for needle in [
        "Siegler",
        "Bohanec",
        "Schlimmer",
        "Olave",
        "Higuera",
        "Ugulino",
        "CC BY 4.0",
        "6c4b860ba7c092a1c81ea7fa9dc70cba9f5fb4ec",
        "8215d7010b3cf80dd2386baed9e50d12f765c401",
        "c43b845a39c9192d58658beab49ae08d3a338161",
        "38cfb2cd7e3174b5b7d329a438ed853220aa5cca",
        "47c1c9f3748157c03c36e8f94c470b26be618d71",
        "bba606f02c76bc42b515fa8d6e21325d4c1b2526",
    ]:
        assert needle in text, needle


def test_bundled_size_is_small() -> None:
    total = sum(f.stat().st_size for f in Path(str(UCI_DATA)).iterdir())
    assert total < 600_000


def test_load_from_path_equals_bundled(bundled: dict[str, MulticlassDataset]) -> None:
    shared = need_shared()
    ds = load_uci(shared / "uci_car" / "car.data")
    np.testing.assert_array_equal(ds.X, bundled["car"].X)
    assert ds.class_names == bundled["car"].class_names


@pytest.fixture(scope="module")
def har_paper() -> tuple[MulticlassDataset, list[warnings.WarningMessage]]:
    path = need_shared() / HAR
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load_uci(path)
    return ds, caught


def test_har_drops_the_malformed_row(
    har_paper: tuple[MulticlassDataset, list[warnings.WarningMessage]],
) -> None:
    ds, caught = har_paper
    # The paper's Table 2 drops the row ("single data point with missing value removed").
    assert ds.n_samples == 165_632
    assert ds.feature_names == [f"{a}{i}" for i in range(1, 5) for a in "xyz"]
    assert ds.n_classes == 5 and ds.nominal == {}
    assert ds.class_counts() == {**HAR_CLASSES, "standingup": 12414}
    assert not np.isnan(ds.X).any()
    assert ds.X[0].tolist() == [-3, 92, -63, -23, 18, -19, 5, 104, -92, -150, -103, -147]
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1
    assert HAR in messages[0] and f"line {HAR_BAD_LINE}" in messages[0]
    assert "-14420-11-2011 04:50:23.713" in messages[0] and "dropped" in messages[0]
    assert f"line {HAR_BAD_LINE}" in ds.missing and ds.notes == messages


def test_har_nan_keeps_the_row() -> None:
    path = need_shared() / HAR
    with pytest.warns(UserWarning, match=f"line {HAR_BAD_LINE}.*set to NaN"):
        ds = load_uci(path, missing="nan")
    assert ds.n_samples == 165_633 and ds.class_counts() == HAR_CLASSES
    assert np.isnan(ds.X).sum() == 1 and np.isnan(ds.X[HAR_BAD_LINE - 2, 11])


def test_decimal_comma_and_crlf(tmp_path: Path) -> None:
    header = "user;gender;age;how_tall_in_meters;weight;body_mass_index;"
    header += ";".join(f"{a}{i}" for i in range(1, 5) for a in "xyz") + ";class"
    row = "ana;Woman;30;1,62;60;22,9;" + ";".join(["1,5"] + ["2"] * 11) + ";walking"
    path = tmp_path / "dataset-har-PUC-Rio-ugulino.csv"
    path.write_bytes(f"{header}\r\n{row}\r\n".encode())
    ds = load_uci(path)
    assert ds.X.tolist() == [[1.5] + [2.0] * 11] and ds.class_names == ["walking"]


def test_old_mac_line_ends_read_as_lines(tmp_path: Path) -> None:
    # a CR alone ends a line, as the ARFF reader and Python's universal newlines read it; the
    # whole file was one line of 13 fields
    path = tmp_path / "balance-scale.data"
    path.write_bytes(b"B,1,1,1,1\rR,1,2,1,1\rL,2,1,1,1\r")
    ds = load_uci(path)
    assert ds.X.tolist() == [[1, 1, 1, 1], [1, 2, 1, 1], [2, 1, 1, 1]]


def test_experiment_data_merges_nursery_classes_under_any_spelling() -> None:
    from olboost.experiments import load_experiment_data

    for name in ("nursery", "Nursery", "NURSERY"):
        assert load_experiment_data(name).n_classes == 4  # the paper's 4, not the file's 5


def test_malformed_user_file(tmp_path: Path) -> None:
    path = tmp_path / "car.data"
    path.write_text("vhigh,vhigh,2,2,small,low,unacc\nvhigh,vhigh,2,2,small,unacc\n")
    with pytest.raises(ValueError, match=r"car\.data, line 2: 6 fields, expected 7"):
        load_uci(path)

    path = tmp_path / "balance-scale.data"
    path.write_text("B,1,1,1,1\nR,1,1,x,2\n")
    with pytest.raises(ValueError, match=r"balance-scale\.data, line 2: right-weight: 'x'"):
        load_uci(path)

    header = "user;gender;age;how_tall_in_meters;weight;body_mass_index;"
    header += ";".join(f"{a}{i}" for i in range(1, 5) for a in "xyz") + ";class\n"
    good = "ana;Woman;30;1,62;60;22,9;" + ";".join(["1"] * 12) + ";walking\n"
    bad = "ana;Woman;30;1,62;60;22,9;" + ";".join(["1"] * 11) + ";2012-01-01;walking\n"
    path = tmp_path / "dataset-har-PUC-Rio-ugulino.csv"
    path.write_text(header + good + bad)
    with pytest.raises(ValueError, match=r"ugulino\.csv, line 3: z4: '2012-01-01'"):
        load_uci(path)

    path = tmp_path / "nursery.data"
    path.write_text("usual,proper,complete,1,convenient,convenient,nonprob,recommended,?\n")
    with pytest.raises(ValueError, match=r"nursery\.data, line 1: missing class"):
        load_uci(path)


def test_python_only_number_syntax_is_not_a_number(tmp_path: Path) -> None:
    # float() and numpy read "1_0" as 10.0 and other scripts' digits as digits; neither is a
    # number of a CSV file. Both the fast path and the per-value one (a file with '?') refuse.
    path = tmp_path / "balance-scale.data"
    for rows, line, token in [
        ("B,1,1,1,1\nR,1_0,1,1,2\n", 2, "left-weight: '1_0'"),
        ("B,?,1,1,1\nR,1,2_0,1,2\n", 2, "left-distance: '2_0'"),
        ("B,1,1,1,1\nR,1,1,\u0661,2\n", 2, "right-weight: '\u0661'"),
        ("B,x,1,1,1\nR,1_0,1,1,2\n", 1, "left-weight: 'x'"),  # the first bad value is named
    ]:
        path.write_text(rows, encoding="utf-8")
        for missing in ("paper", "nan"):
            with pytest.raises(
                ValueError,
                match=rf"balance-scale\.data, line {line}: {re.escape(token)} is not a number",
            ):
                load_uci(path, missing=missing)
    # the forms a CSV number takes, and the missing markers, read as before
    path.write_text("L,1e0,-0.5,.5,nan\nR,?,,+2,1E1\nB, 3 ,-0,4.,1\n")
    ds = load_uci(path, missing="nan")
    expected = [[1.0, -0.5, 0.5, np.nan], [np.nan, np.nan, 2.0, 10.0], [3.0, -0.0, 4.0, 1.0]]
    np.testing.assert_array_equal(ds.X, expected)
    assert load_uci(path).X[1].tolist() == [0.0, 0.0, 2.0, 10.0]


def test_unknown_names_and_options(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="balance, car, mushroom, nursery, mice"):
        load_uci("isolet")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n")
    with pytest.raises(ValueError, match="not a known UCI file.*bundled names: balance"):
        load_uci(other)
    with pytest.raises(ValueError, match="missing must be one of"):
        load_uci("car", missing="zero")
    with pytest.raises(FileNotFoundError):
        load_uci(tmp_path / "car.data")


def test_values_beyond_the_model_bound_name_the_file_line(tmp_path: Path) -> None:
    # every model refuses |x| > 1e100, naming only a row of the shuffled stream: the loader
    # names the line, as the MULAN loader does
    path = tmp_path / "balance-scale.data"
    path.write_text("B,1,1,1,1\nR,1,1e150,1,2\n")
    with pytest.raises(
        ValueError, match=r"balance-scale\.data, line 2: left-distance: 1e150 lies beyond"
    ):
        load_uci(path)
    path.write_text("B,1,1,1,1\nR,1,1e100,1,-1e100\n")
    assert load_uci(path).X[1].tolist() == [1.0, 1e100, 1.0, -1e100]


def test_surrounding_whitespace_makes_no_new_class_or_category(tmp_path: Path) -> None:
    # 'unacc ' was a class of its own beside 'unacc' (numbers and '?' were already stripped)
    path = tmp_path / "car.data"
    path.write_text("vhigh,vhigh,2,2,small,low,unacc\nvhigh ,vhigh,2,2,small,low, unacc \n")
    ds = load_uci(path)
    assert ds.class_names == ["unacc"] and ds.y.tolist() == [0, 0]
    assert ds.nominal[0] == ["vhigh"] and ds.X[:, 0].tolist() == [0.0, 0.0]


def test_quoted_fields_read_as_csv_quotes_them(tmp_path: Path) -> None:
    # A file saved again by a spreadsheet quotes its fields: '"vhigh"' was a category of its
    # own beside 'vhigh', and the mice header '"MouseID"' no column of that name
    path = tmp_path / "car.data"
    path.write_text('"vhigh",vhigh,2,2,small,low,unacc\nvhigh,"vhigh",2,2,small,low,"acc"\n')
    ds = load_uci(path)
    assert ds.nominal[0] == ["vhigh"] and ds.nominal[1] == ["vhigh"]
    assert ds.X[:, :2].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert ds.class_names == ["unacc", "acc"]
    path.write_text('"vh"igh",vhigh,2,2,small,low,unacc\n')
    with pytest.raises(ValueError, match=r"car\.data, line 1: malformed quoted field"):
        load_uci(path)
    path.write_text('"vhigh,vhigh",2,2,small,low,unacc\n')  # a delimiter inside quotes
    with pytest.raises(ValueError, match=r"car\.data, line 1: 6 fields, expected 7"):
        load_uci(path)


def test_a_line_of_spaces_carries_no_row(tmp_path: Path) -> None:
    # as an empty line: an editor's trailing indentation was "line 4: 1 fields, expected 5"
    path = tmp_path / "balance-scale.data"
    path.write_text("B,1,1,1,1\nR,1,2,1,1\n \t \nL,2,1,1,1\n   \n")
    ds = load_uci(path)
    assert ds.X.shape == (3, 4) and ds.class_names == ["B", "R", "L"]


HAR_HEADER = (
    "user;gender;age;how_tall_in_meters;weight;body_mass_index;x1;y1;z1;x2;y2;z2;x3;y3;z3;x4;"
    "y4;z4;class"
)
HAR_ROW = "debora;Woman;46;1,62;75;28,6;-3;92;-63;-23;18;-19;5;104;-92;-150;-103;{};sitting"


@pytest.mark.parametrize("missing", ["paper", "nan"])
def test_the_har_defect_is_not_counted_as_a_missing_value(tmp_path: Path, missing: str) -> None:
    # the malformed z4 of the HAR file (a date run into the number) is a defect, reported as
    # one; counted as well as a missing value, it was "1 missing values ... (z4: 1)" beside it
    path = tmp_path / "dataset-har-PUC-Rio-ugulino.csv"
    rows = [HAR_ROW.format(z4) for z4 in ("-147", "-14420-11-2011 04:50:23.713", "-148")]
    path.write_text("\n".join([HAR_HEADER, *rows]) + "\n")
    with pytest.warns(UserWarning, match="line 3"):
        ds = load_uci(path, missing=missing)
    assert "line 3" in ds.missing and "(z4: 1)" not in ds.missing, ds.missing
    assert ds.n_samples == (2 if missing == "paper" else 3)
