"""Issue 38, section 1, "Tables and files that cannot be right": ``from_tables`` refuses a
non-finite number in any table, and ``load`` refuses classes a fit cannot have learned (a
dtype that changes a label, two labels equal in Python, a missing one), stated tables out of
their domain and an invalid Categorical ``unseen`` setting, each with one line naming the
table or member."""

import json
import zipfile

import numpy as np
import pandas as pd
import pytest

import bayesnb as bnb

NAN, INF = float("nan"), float("inf")
PRIOR = {"lo": 0.4, "hi": 0.6}


def good_tables():
    return {"categorical": {"colour": {"lo": {"red": 0.7, "blue": 0.3},
                                       "hi": {"red": 0.2, "blue": 0.8}}},
            "bernoulli": {"flag": {"lo": 0.1, "hi": 0.85}},
            "gaussian": {"size": {"lo": (-1.0, 0.5), "hi": (2.0, 1.5)}},
            "poisson": {"visits": {"lo": 0.5, "hi": 4.0}}}


# one bad number per kind of table and per place in its entry, as (table, setter, named part)
def set_categorical(t, v):
    t["categorical"]["colour"]["hi"]["blue"] = v


def set_bernoulli(t, v):
    t["bernoulli"]["flag"]["hi"] = v


def set_mean(t, v):
    t["gaussian"]["size"]["hi"] = (v, 1.5)


def set_sd(t, v):
    t["gaussian"]["size"]["hi"] = (2.0, v)


def set_rate(t, v):
    t["poisson"]["visits"]["hi"] = v


PLACES = [("categorical", set_categorical, "level 'blue'"),
          ("bernoulli", set_bernoulli, "P(x = 1)"),
          ("gaussian", set_mean, "mean"),
          ("gaussian", set_sd, "sd"),
          ("poisson", set_rate, "the rate")]


@pytest.mark.parametrize("kind, place, part", PLACES, ids=[p[2] for p in PLACES])
@pytest.mark.parametrize("bad", [NAN, INF, -INF, "many"], ids=["nan", "inf", "-inf", "text"])
def test_from_tables_refuses_a_number_that_is_not_finite(kind, place, part, bad):
    tables = good_tables()
    place(tables, bad)
    with pytest.raises(ValueError) as info:
        bnb.from_tables(PRIOR, **tables)
    text = str(info.value)
    assert f"{kind} table, column" in text and "class 'hi'" in text and part in text, text
    assert "\n" not in text


@pytest.mark.parametrize("bad", [NAN, INF])
def test_from_tables_refuses_a_class_prior_that_is_not_finite(bad):
    with pytest.raises(ValueError, match="class_prior, class 'lo'"):
        bnb.from_tables({"lo": bad, "hi": 0.6}, **good_tables())


def test_good_tables_predict_by_hand(x64):
    """The checks leave valid tables alone: predictions equal a hand computation."""
    clf = bnb.from_tables(PRIOR, **good_tables())
    X = pd.DataFrame({"colour": ["blue", "red"], "flag": [1.0, 0.0], "size": [0.3, 1.9],
                      "visits": [3.0, 0.0]})
    from scipy.stats import norm, poisson
    joint = []
    for c, (m, s), p1, rate, pc in [("lo", (-1.0, 0.5), 0.1, 0.5, 0.4),
                                    ("hi", (2.0, 1.5), 0.85, 4.0, 0.6)]:
        colour = np.where(X["colour"] == "blue", good_tables()["categorical"]["colour"][c]["blue"],
                          good_tables()["categorical"]["colour"][c]["red"])
        joint.append(np.log(pc) + np.log(colour) + np.log(np.where(X["flag"] == 1, p1, 1 - p1))
                     + norm.logpdf(X["size"], m, s) + poisson.logpmf(X["visits"], rate))
    joint = np.array(joint).T
    expected = np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(X)[:, list(clf.classes_).index("lo")],
                               expected[:, 0], rtol=1e-10)


# ---------------------------------------------------------------- model files
def members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def rewrite(path, change):
    """Rewrite the file's manifest as ``change(manifest)`` (in place)."""
    data = members(path)
    manifest = json.loads(data["manifest.json"])
    change(manifest)
    data["manifest.json"] = json.dumps(manifest)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, d in data.items():
            zf.writestr(n, d)
    return path


def refused(path, *patterns):
    with pytest.raises(bnb.ModelFileError) as info:
        bnb.load(path)
    text = str(info.value)
    assert "\n" not in text, text
    for p in patterns:
        assert p in text, text


def fitted_file(tmp_path, labels, name="m.bnb"):
    rng = np.random.default_rng(3)
    n = 40
    y = np.asarray(labels)[rng.integers(0, len(labels), n)]
    y[: len(labels)] = labels  # every class present
    X = pd.DataFrame({"colour": rng.choice(["red", "blue", "green"], n),
                      "size": rng.normal(size=n)})
    return bnb.save(bnb.NaiveBayes(method="mean").fit(X, y), tmp_path / name)


def set_classes(dtype, values):
    def change(m):
        m["classes"] = {"dtype": dtype, "values": values}
    return change


@pytest.mark.parametrize("dtype, values, said", [
    ("<U3", ["alpha", "beta"], "'alpha' into 'alp'"),  # truncated, yet as wide as the values
    ("<U2", ["ab", "cde"], "'cde' into 'cd'"),
    ("<f4", [16777217, 3], "16777217 into 16777216"),  # float32 cannot hold the integer
    ("<f4", [0.1, 2.0], "0.1 into 0.10000000149"),
])
def test_load_refuses_a_classes_dtype_that_changes_a_label(tmp_path, dtype, values, said):
    path = rewrite(fitted_file(tmp_path, ["u", "v"]), set_classes(dtype, values))
    refused(path, "classes of dtype", said)


@pytest.mark.parametrize("values", [[True, 1], [0, False], [1, 1.0], [2.0, 2]],
                         ids=str)
def test_load_refuses_classes_equal_in_python(tmp_path, values):
    path = rewrite(fitted_file(tmp_path, ["u", "v"]), set_classes("object", values))
    refused(path, "equal in Python")


@pytest.mark.parametrize("values", [[None, "v"], ["u", None]], ids=str)
def test_load_refuses_a_missing_class(tmp_path, values):
    path = rewrite(fitted_file(tmp_path, ["u", "v"]), set_classes("object", values))
    refused(path, "is null")


@pytest.mark.parametrize("labels, dtype, values", [
    (np.array(["u", "v"], dtype=object), "object", ["u", "v"]),
    ([3, 7], "<i8", [3, 7]),
    ([True, False], "|b1", [False, True]),
    ([1.0, 2.0], "<f8", [1.0, 2.0]),
    (["no", "yes"], "<U3", ["no", "yes"]),
])
def test_honest_classes_still_load(tmp_path, labels, dtype, values):
    path = fitted_file(tmp_path, labels)
    manifest = json.loads(members(path)["manifest.json"])
    assert manifest["classes"] == {"dtype": dtype, "values": values}
    assert bnb.load(path).classes_.tolist() == values


@pytest.mark.parametrize("unseen", ["bogus", 1, None, ["warn"]], ids=str)
def test_load_refuses_an_invalid_unseen_setting(tmp_path, unseen):
    path = fitted_file(tmp_path, ["u", "v"])

    def change(m):
        block = next(b for b in m["blocks"] if b["family"] == "categorical")
        block["hyper"]["unseen"] = unseen
    refused(rewrite(path, change), "block 0 (categorical)", "unseen must be one of")


@pytest.mark.parametrize("unseen", ["warn", "smooth", "error"])
def test_every_valid_unseen_setting_loads(tmp_path, unseen):
    path = fitted_file(tmp_path, ["u", "v"])

    def change(m):
        m["blocks"][0]["hyper"]["unseen"] = unseen
    assert bnb.load(rewrite(path, change)).blocks_[0].family.unseen == unseen


def tables_file(tmp_path):
    return bnb.save(bnb.from_tables(PRIOR, **good_tables()), tmp_path / "t.bnb")


def with_table(path, family, field, change):
    """Rewrite one stated table array of the block of ``family``."""
    import io
    data = members(path)
    manifest = json.loads(data["manifest.json"])
    block = next(b for b in manifest["blocks"] if b["family"] == family)
    member = f"arrays/{block['tables'][field]}.npy"
    array = np.load(io.BytesIO(data[member]))
    change(array)
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    data[member] = buf.getvalue()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, d in data.items():
            zf.writestr(n, d)
    return member


@pytest.mark.parametrize("family, field, value, said", [
    ("bernoulli", "log_p", NAN, "NaN or infinite"),
    ("bernoulli", "log1m_p", INF, "NaN or infinite"),
    ("gaussian", "mean", -INF, "NaN or infinite"),
    ("gaussian", "mean", NAN, "NaN or infinite"),
    ("gaussian", "precision", 0.0, "precision must be positive"),
    ("gaussian", "precision", -2.0, "precision must be positive"),
    ("gaussian", "precision", -INF, "NaN or infinite"),
    ("poisson", "rate", -1.0, "rate must be non-negative"),
    ("poisson", "rate", -INF, "NaN or infinite"),
    ("categorical", "log_prob", NAN, "NaN or infinite"),
])
def test_load_refuses_a_stated_table_out_of_its_domain(tmp_path, family, field, value, said):
    path = tables_file(tmp_path)
    member = with_table(path, family, field, lambda a: a.__setitem__((1, 0), value))
    refused(path, member, said)


def test_a_stated_zero_probability_still_loads(tmp_path, x64):
    """log-probability tables may hold -inf (a probability of 0), as from_tables states them."""
    tables = good_tables()
    tables["bernoulli"]["flag"]["lo"] = 0.0
    clf = bnb.from_tables(PRIOR, **tables)
    back = bnb.load(bnb.save(clf, tmp_path / "z.bnb"))
    X = pd.DataFrame({"colour": ["red"], "flag": [1.0], "size": [0.0], "visits": [1.0]})
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    assert back.predict_proba(X)[0, list(back.classes_).index("lo")] == 0.0
