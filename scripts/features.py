"""The feature sets of the protocols (docs/protocols.md), behind scripts/features.sh; run it
through that script.

argv (fixed positions, no options, so that no path is ever parsed as a flag or run as code):
  1 OUTDIR     an existing directory (features.sh creates it and refuses a non-directory)
  2 ONLY       comma-separated set names, or "" for all of them
  3 P          the width of fmnist_rf (a positive integer)
  4 MAX_ROWS   a positive integer (the first rows of each source split), or "" for all
  5 SEED       the seed of the random-feature matrix, the digits split and the reference rows

Writes, per set NAME: NAME_train_x.npy, NAME_train_y.npy, NAME_test_x.npy, NAME_test_y.npy and
NAME.provenance.json (source, licence, citation, split, preprocessing with every constant's
origin, and the shape, dtype, size and sha256 of every .npy). Labels are int64 0..K-1.
Every file goes to a temporary name and is renamed, the provenance file last; nothing depends on
the date or on OUTDIR, so a rerun rewrites byte-identical files.

Standardisation (every set): x_j <- (x_j - m_j) / s_j with m_j, s_j the mean and standard
deviation of coordinate j over the REFERENCE rows only: a seeded 10 % of the training rows (the
protocol's public_fraction), never the test rows and never the other 90 %. s_j is floored at
0.1 x the median of the s_j (near-constant border pixels would otherwise be blown up into
outliers). The protocols redraw their public split per replicate, so in most replicates the
reference rows are not exactly the public ones: the constants are 2 d aggregate statistics of
10 % of the training rows that the privacy accounting does not cover (docs/protocols.md says so).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import datasets  # noqa: E402  (scripts/datasets.py: the IDX reader, provenance helpers)

Refused = datasets.Refused
NAMES = ("digits", "fmnist_pixels", "fmnist_rf", "fmnist_rf768")
REFERENCE_FRACTION = 0.1
SD_FLOOR_OF_MEDIAN = 0.1
DIGITS_TEST_FRACTION = 0.3
CHUNK_ROWS = 4096
GENERATED_BY = "scripts/features.sh (dpdyn)"


def reference_rows(n, seed):
    """The seeded 10 % of n training rows whose statistics standardise every coordinate."""
    m = max(2, int(round(REFERENCE_FRACTION * n)))
    rng = np.random.default_rng([seed, 1])
    return np.sort(rng.permutation(n)[:m])


def standardiser(x_ref):
    """(mean, sd) per coordinate of the reference rows, sd floored (module docstring)."""
    mean = x_ref.mean(axis=0)
    sd = x_ref.std(axis=0)
    floor = SD_FLOOR_OF_MEDIAN * float(np.median(sd))
    if not floor > 0:
        floor = 1.0
    return mean, np.maximum(sd, floor), floor


def stats_record(ref, n_train, floor, sd_raw):
    return {
        "rows": "a seeded %g of the training rows (%d of %d; numpy default_rng([seed, 1]) "
                "permutation, first %d, sorted); never test rows"
                % (REFERENCE_FRACTION, len(ref), n_train, len(ref)),
        "mean": "per coordinate, over those rows",
        "sd": "per coordinate (population sd, ddof 0), over those rows, floored at %g x the "
              "median sd = %.6g (%d of %d coordinates floored)"
              % (SD_FLOOR_OF_MEDIAN, floor, int(np.sum(sd_raw < floor)), len(sd_raw)),
        "privacy": "the protocols redraw the public split per replicate, so these rows are "
                   "not always the public ones: 2 d aggregate statistics of 10 % of the "
                   "training rows enter the preprocessing outside the privacy accounting "
                   "(docs/protocols.md)",
    }


def fmnist_pixels01(src, max_rows):
    """Fashion-MNIST pixels / 255 (float64) and labels (int64), train and test."""
    out = {}
    for split in ("train", "test"):
        img, n_img = datasets.read_idx(
            os.path.join(src, datasets.FMNIST_FILES[split + "_images"]), 3, max_rows)
        lab, n_lab = datasets.read_idx(
            os.path.join(src, datasets.FMNIST_FILES[split + "_labels"]), 1, max_rows)
        if n_img != n_lab or img.shape[1:] != (28, 28):
            raise Refused("Fashion-MNIST %s: %d images of %s pixels and %d labels"
                          % (split, n_img, img.shape[1:], n_lab))
        if lab.size and lab.max() > 9:
            raise Refused("Fashion-MNIST %s: a label %d outside 0..9" % (split, int(lab.max())))
        out[split] = (img.reshape(img.shape[0], 784).astype(np.float64) / 255.0,
                      lab.astype(np.int64))
    return out


def fmnist_source(src):
    debian = src == datasets.FMNIST_DEBIAN_DIR
    return {
        "kind": "debian-package" if debian else "directory (DPD_FASHION_MNIST_DIR)",
        "package": "dataset-fashion-mnist" if debian else None,
        "version": datasets.dpkg_version("dataset-fashion-mnist") if debian else None,
        "directory": src,
        "files": [{"file": f, "sha256": datasets.sha256_file(os.path.join(src, f))}
                  for f in datasets.FMNIST_FILES.values()],
        "reader": "scripts/datasets.py read_idx (the reader of scripts/datasets.sh)",
        "upstream": "https://github.com/zalandoresearch/fashion-mnist",
    }


FMNIST_LICENCE = {"spdx": "MIT", "copyright": "2017, Zalando SE",
                  "evidence": "/usr/share/doc/dataset-fashion-mnist/copyright (License: Expat)"}
FMNIST_CITATION = ("Han Xiao, Kashif Rasul, Roland Vollgraf. Fashion-MNIST: a Novel Image Dataset "
                   "for Benchmarking Machine Learning Algorithms. arXiv:1708.07747, 2017.")


def relu_features(x, V, mean=None, sd=None):
    """ReLU(x V^T / sqrt(d_in)) in row chunks, standardised when mean/sd are given (float32)."""
    d_in = x.shape[1]
    out = np.empty((x.shape[0], V.shape[0]), dtype=np.float32)
    for a in range(0, x.shape[0], CHUNK_ROWS):
        z = np.maximum(x[a:a + CHUNK_ROWS] @ V.T / np.sqrt(d_in), 0.0)
        if mean is not None:
            z = (z - mean) / sd
        out[a:a + CHUNK_ROWS] = z
    return out


def write_set(outdir, name, parts, dtype, roles):
    files = []
    for split in ("train", "test"):
        x, y = parts[split]
        files.append(datasets.save_npy(outdir, "%s_%s_x.npy" % (name, split),
                                       np.ascontiguousarray(x, dtype=dtype),
                                       "%s features: %s" % (split, roles["x"])))
        files.append(datasets.save_npy(outdir, "%s_%s_y.npy" % (name, split),
                                       y.astype(np.int64), "%s labels: %s" % (split, roles["y"])))
    return files


def export_fmnist(outdir, names, p, max_rows, seed, src):
    data = fmnist_pixels01(src, max_rows)
    xtr, ytr = data["train"]
    xte, yte = data["test"]
    ref = reference_rows(xtr.shape[0], seed)
    mean, sd, floor = standardiser(xtr[ref])
    sd_raw = xtr[ref].std(axis=0)
    ztr, zte = (xtr - mean) / sd, (xte - mean) / sd
    split = ("the published split: train = train-*-ubyte.gz (%d rows exported), test = "
             "t10k-*-ubyte.gz (%d rows exported), file order" % (xtr.shape[0], xte.shape[0]))
    common = {"generated_by": GENERATED_BY, "source": fmnist_source(src),
              "licence": FMNIST_LICENCE, "citation": FMNIST_CITATION, "split": split,
              "max_rows": max_rows, "seed": seed, "classes": list(datasets.FMNIST_CLASSES),
              "K": 10}
    roles_y = {"y": "the class 0..9 (int64)"}
    if "fmnist_pixels" in names:
        files = write_set(outdir, "fmnist_pixels", {"train": (ztr, ytr), "test": (zte, yte)},
                          np.float32, dict(roles_y, x="784 standardised pixels (float32)"))
        rec = dict(common, dataset="fmnist_pixels",
                   title="Fashion-MNIST pixels, standardised (d = 784)",
                   preprocessing="pixels uint8 / 255 -> [0, 1] (float64), then (x - m) / s per "
                                 "coordinate with the reference statistics below; stored float32",
                   standardisation=stats_record(ref, xtr.shape[0], floor, sd_raw), files=files)
        datasets.save_provenance(outdir, "fmnist_pixels", rec)
    for name, width in (("fmnist_rf", p), ("fmnist_rf768", 768)):
        if name not in names:
            continue
        rng = np.random.default_rng([seed, 2])
        V = rng.standard_normal((width, 784))  # row-major: the first 768 rows of any p >= 768
        raw_ref = relu_features(ztr[ref], V)
        rmean, rsd, rfloor = standardiser(raw_ref.astype(np.float64))
        rsd_raw = raw_ref.astype(np.float64).std(axis=0)
        ftr = relu_features(ztr, V, rmean, rsd)
        fte = relu_features(zte, V, rmean, rsd)
        files = write_set(outdir, name, {"train": (ftr, ytr), "test": (fte, yte)}, np.float32,
                          dict(roles_y, x="%d standardised random ReLU features (float32)" % width))
        rec = dict(common, dataset=name,
                   title="Fashion-MNIST random ReLU features (p = %d)" % width,
                   preprocessing=(
                       "z = the standardised pixels of fmnist_pixels (same reference rows); "
                       "f = ReLU(V z / sqrt(784)) with V a %d x 784 matrix of i.i.d. N(0, 1) "
                       "(numpy default_rng([seed, 2]).standard_normal((p, 784)), row-major, so "
                       "the first 768 rows are fmnist_rf768's V); then (f - m) / s per "
                       "coordinate with the statistics of f over the reference rows; float32"
                       % width),
                   stand_in=("a documented stand-in for the embeddings of a pre-trained "
                             "network (the papers' ResNet-50 / ViT features), which cannot be "
                             "fetched here: a fixed random non-linear map of the pixels, seeded"),
                   memory=("float32 file: %d MB (train) + %d MB (test); dpdyn holds the rows "
                           "as float64: twice that" % (ftr.nbytes // 1000000, fte.nbytes // 1000000)),
                   p=width, standardisation=stats_record(ref, xtr.shape[0], rfloor, rsd_raw),
                   files=files)
        datasets.save_provenance(outdir, name, rec)


def export_digits(outdir, max_rows, seed):
    import sklearn
    import sklearn.datasets
    from sklearn.model_selection import train_test_split
    bunch = sklearn.datasets.load_digits()
    n = datasets.limit(bunch.data.shape[0], max_rows)
    x = np.asarray(bunch.data[:n], dtype=np.float64) / 16.0
    y = np.asarray(bunch.target[:n], dtype=np.int64)
    counts = np.bincount(y, minlength=10)
    strat = y if counts.min() >= 2 and len(np.unique(y)) == 10 else None
    idx_tr, idx_te = train_test_split(np.arange(n), test_size=DIGITS_TEST_FRACTION,
                                      random_state=seed, stratify=strat)
    idx_tr, idx_te = np.sort(idx_tr), np.sort(idx_te)
    ref = reference_rows(len(idx_tr), seed)
    mean, sd, floor = standardiser(x[idx_tr][ref])
    sd_raw = x[idx_tr][ref].std(axis=0)
    parts = {"train": ((x[idx_tr] - mean) / sd, y[idx_tr]),
             "test": ((x[idx_te] - mean) / sd, y[idx_te])}
    files = write_set(outdir, "digits", parts, np.float64,
                      {"x": "64 standardised pixel counts (float64)",
                       "y": "the digit 0..9 (int64)"})
    spec = datasets.SKLEARN_SETS["digits"]
    rec = {
        "dataset": "digits", "title": "scikit-learn digits, standardised (d = 64)",
        "generated_by": GENERATED_BY,
        "source": {"kind": "scikit-learn", "loader": spec["call"],
                   "scikit_learn_version": sklearn.__version__,
                   "debian_version": datasets.dpkg_version("python3-sklearn"),
                   "origin": spec["origin"]},
        "licence": {"spdx": None, "evidence": "as digits in scripts/datasets.sh (docs/datasets.md)"},
        "citation": spec["citation"],
        "split": ("sklearn train_test_split(test_size=%g, random_state=seed, stratify=labels): "
                  "%d train, %d test rows (each kept in the loader's order)"
                  % (DIGITS_TEST_FRACTION, len(idx_tr), len(idx_te))),
        "max_rows": max_rows, "seed": seed, "K": 10,
        "preprocessing": "pixel counts 0..16 / 16 (float64), then (x - m) / s per coordinate "
                         "with the reference statistics below",
        "standardisation": stats_record(ref, len(idx_tr), floor, sd_raw),
        "files": files,
    }
    datasets.save_provenance(outdir, "digits", rec)


def main(argv):
    if len(argv) != 6:
        raise Refused("usage: features.py OUTDIR ONLY P MAX_ROWS SEED (run scripts/features.sh)")
    outdir, only, p, max_rows, seed = argv[1:6]
    if not os.path.isdir(outdir):
        raise Refused("OUTDIR %r is not a directory" % outdir)
    names = [s for s in only.split(",") if s] if only else list(NAMES)
    for s in names:
        if s not in NAMES:
            raise Refused("unknown feature set %r (allowed: %s)" % (s, ", ".join(NAMES)))
    try:
        p = int(p)
        seed = int(seed)
        max_rows = int(max_rows) if max_rows else None
    except ValueError:
        raise Refused("P, SEED and MAX_ROWS must be integers (got %r, %r, %r)"
                      % (argv[3], argv[5], argv[4]))
    if p < 1 or seed < 0 or (max_rows is not None and max_rows < 1):
        raise Refused("--p must be >= 1, --seed >= 0, --max-rows >= 1")
    fm = [s for s in names if s.startswith("fmnist")]
    src = datasets.fmnist_check() if fm else None
    if "digits" in names:
        datasets.sklearn_check()
    if "digits" in names:
        export_digits(outdir, max_rows, seed)
    if fm:
        export_fmnist(outdir, fm, p, max_rows, seed, src)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Refused as e:
        print("features: %s" % e, file=sys.stderr)
        sys.exit(1)
    except MemoryError:
        print("features: out of memory (fmnist_rf holds 4 p bytes per row, 70000 rows, plus "
              "about 1 GB of pixels: lower --p)", file=sys.stderr)
        sys.exit(1)
