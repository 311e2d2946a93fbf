"""The exporter behind scripts/datasets.sh (docs/datasets.md); run it through that script.

argv (fixed positions, no options, so that no path is ever parsed as a flag or run as code):
  1 OUTDIR     an existing directory (datasets.sh creates it and refuses a non-directory)
  2 ONLY       comma-separated dataset names, or "" for all of them
  3 MAX_ROWS   a positive integer, or "" for every row

Writes, per dataset NAME, its .npy files and NAME.provenance.json (source, licence, citation,
split, preprocessing, target rule, and the shape, dtype, size and sha256 of every .npy). Every
file is written to a temporary name in OUTDIR and renamed, the provenance file last, so that a
provenance file only ever describes complete files. The output holds no date and no OUTDIR, so
running the script again gives byte-identical files.

Environment: DPD_FASHION_MNIST_DIR replaces /usr/share/datasets/fashion-mnist (the Debian
package's files) by a directory holding the same four IDX .gz files (the test's small ones).
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

NAMES = ("fmnist", "digits", "diabetes", "breast_cancer")
FMNIST_DEBIAN_DIR = "/usr/share/datasets/fashion-mnist"
FMNIST_FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}
FMNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                  "Sneaker", "Bag", "Ankle boot")
# The regression target's +1 classes (docs/datasets.md "The Fashion-MNIST regression target").
FMNIST_TORSO = (0, 2, 3, 4, 6)

PREPROCESSING = ("by this export: none beyond the type conversion (and the row limit, when max_rows is set): the "
                 "values are those of the source, in its row order; dpdyn centres and scales at "
                 "run time (keys center, scale, target_scale; docs/linreg.md)")


class Refused(Exception):
    """A user-facing error: printed on one line, exit 1."""


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dpkg_version(package):
    """The installed version of a Debian package, or None (not installed, or not Debian)."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "--", package],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    v = r.stdout.decode("utf-8", "replace").strip()
    return v if r.returncode == 0 and v else None


def write_atomic(outdir, name, write):
    """Calls write(file object) on a temporary file in outdir, then renames it to name."""
    final = os.path.join(outdir, name)
    tmp = os.path.join(outdir, ".%s.tmp-%d" % (name, os.getpid()))
    try:
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, final)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return final


def save_npy(outdir, name, array, role):
    array = np.ascontiguousarray(array)
    path = write_atomic(outdir, name, lambda f: np.save(f, array, allow_pickle=False))
    print("datasets: %s  %s %s" % (name, " x ".join(str(s) for s in array.shape), array.dtype),
          file=sys.stderr)
    return {"file": name, "role": role, "shape": list(array.shape), "dtype": str(array.dtype),
            "order": "C", "bytes": os.path.getsize(path), "sha256": sha256_file(path)}


def save_provenance(outdir, dataset, record):
    text = json.dumps(record, indent=2) + "\n"
    write_atomic(outdir, dataset + ".provenance.json", lambda f: f.write(text.encode("utf-8")))


def limit(n, max_rows):
    return n if max_rows is None else min(n, max_rows)


# ---- Fashion-MNIST (IDX files, parsed here) ----------------------------------------------------

def read_idx(path, ndim, max_rows):
    """The uint8 array of a gzip'd IDX file (magic 0 0 8 ndim, big-endian uint32 sizes), its
    first max_rows items when that is set. Returns (array, number of items in the file)."""
    try:
        f = gzip.open(path, "rb")
    except OSError as e:
        raise Refused("cannot open %r: %s" % (path, e))
    with f:
        try:
            head = f.read(4 + 4 * ndim)
            if len(head) != 4 + 4 * ndim or head[:3] != b"\0\0\x08" or head[3] != ndim:
                raise Refused("%r is not an IDX file of unsigned bytes with %d dimensions "
                              "(magic %s)" % (path, ndim, head[:4].hex()))
            dims = [int.from_bytes(head[4 + 4 * k:8 + 4 * k], "big") for k in range(ndim)]
            item = int(np.prod(dims[1:], dtype=np.int64)) if ndim > 1 else 1
            rows = limit(dims[0], max_rows)
            data = f.read(rows * item)
            if len(data) != rows * item:
                raise Refused("%r is truncated: %d bytes of data, %d expected"
                              % (path, len(data), rows * item))
            if rows == dims[0] and f.read(1):
                raise Refused("%r has bytes after its %d items" % (path, dims[0]))
        except (OSError, EOFError) as e:
            raise Refused("cannot read %r: %s" % (path, e))
    return np.frombuffer(data, dtype=np.uint8).reshape([rows] + dims[1:]), dims[0]


def fmnist_check():
    d = os.environ.get("DPD_FASHION_MNIST_DIR") or FMNIST_DEBIAN_DIR
    missing = [f for f in FMNIST_FILES.values() if not os.path.isfile(os.path.join(d, f))]
    if missing:
        if d == FMNIST_DEBIAN_DIR:
            raise Refused("Fashion-MNIST: %s not found in %s: install the Debian package "
                          "dataset-fashion-mnist (scripts/setup.sh does), or leave fmnist out "
                          "with --only digits,diabetes,breast_cancer" % (missing[0], d))
        raise Refused("Fashion-MNIST: %s not found in DPD_FASHION_MNIST_DIR=%r"
                      % (missing[0], d))
    return d


def export_fmnist(outdir, max_rows, src):
    parts = {}
    totals = {}
    for split in ("train", "test"):
        img, n_img = read_idx(os.path.join(src, FMNIST_FILES[split + "_images"]), 3, max_rows)
        lab, n_lab = read_idx(os.path.join(src, FMNIST_FILES[split + "_labels"]), 1, max_rows)
        if n_img != n_lab or img.shape[1:] != (28, 28):
            raise Refused("Fashion-MNIST %s: %d images of %s pixels and %d labels (expected "
                          "as many 28 x 28 images as labels)" % (split, n_img, img.shape[1:], n_lab))
        if lab.size and lab.max() > 9:
            raise Refused("Fashion-MNIST %s: a label %d outside 0..9" % (split, int(lab.max())))
        parts[split] = (img.reshape(img.shape[0], 784).astype(np.float32),
                        lab.astype(np.float64))
        totals[split] = n_img
    files = []
    for split in ("train", "test"):
        x, y = parts[split]
        files.append(save_npy(outdir, "fmnist_%s_x.npy" % split, x,
                              "%s images: 784 pixels per row (28 x 28, row-major), values 0..255"
                              % split))
        files.append(save_npy(outdir, "fmnist_%s_y.npy" % split, y,
                              "%s labels: the class index 0..9" % split))
        files.append(save_npy(outdir, "fmnist_%s_yreg.npy" % split,
                              np.where(np.isin(y, FMNIST_TORSO), 1.0, -1.0),
                              "%s regression target: +1 for the classes worn on the torso, -1 "
                              "for the others (rule below)" % split))
    debian = src == FMNIST_DEBIAN_DIR
    source = {
        "kind": "debian-package" if debian else "directory (DPD_FASHION_MNIST_DIR)",
        "package": "dataset-fashion-mnist" if debian else None,
        "version": dpkg_version("dataset-fashion-mnist") if debian else None,
        "directory": src,
        "files": [{"file": f, "sha256": sha256_file(os.path.join(src, f))}
                  for f in FMNIST_FILES.values()],
        "format": "IDX (gzip): magic 0x00000803 images (uint8, N x 28 x 28), 0x00000801 labels "
                  "(uint8, N), parsed by scripts/datasets.py",
        "upstream": "https://github.com/zalandoresearch/fashion-mnist",
    }
    record = {
        "dataset": "fmnist",
        "title": "Fashion-MNIST",
        "generated_by": "scripts/datasets.sh (dpdyn)",
        "source": source,
        "licence": {
            "spdx": "MIT",
            "name": "MIT (Expat)",
            "copyright": "2017, Zalando SE",
            "evidence": "/usr/share/doc/dataset-fashion-mnist/copyright: 'Files: *', "
                        "'Copyright: 2017, Zalando SE', 'License: Expat'",
        },
        "citation": "Han Xiao, Kashif Rasul, Roland Vollgraf. Fashion-MNIST: a Novel Image "
                    "Dataset for Benchmarking Machine Learning Algorithms. arXiv:1708.07747, "
                    "2017.",
        "split": "the published split: train = train-*-ubyte.gz (%d images), test = t10k-*-"
                 "ubyte.gz (%d images); rows in file order" % (totals["train"], totals["test"]),
        "max_rows": max_rows,
        "rows_exported": {"train": int(parts["train"][0].shape[0]),
                          "test": int(parts["test"][0].shape[0])},
        "preprocessing": PREPROCESSING + "; pixels uint8 -> float32 (exact), labels uint8 -> "
                         "float64 (exact)",
        "classes": list(FMNIST_CLASSES),
        "regression_target": {
            "files": ["fmnist_train_yreg.npy", "fmnist_test_yreg.npy"],
            "rule": "+1 if the label is one of %s (%s), else -1"
                    % (list(FMNIST_TORSO), ", ".join(FMNIST_CLASSES[k] for k in FMNIST_TORSO)),
            "why": "the class index is nominal (its order is arbitrary), so a linear fit of it "
                   "measures nothing; a +-1 target is least-squares classification (a Fisher "
                   "discriminant). This split is balanced (6000 images per class: mean 0, "
                   "variance 1 on the full sets) and leaves a real residual: the least-squares "
                   "fit on the full train set explains 85% of its variance (97.5% of test signs "
                   "right). docs/datasets.md",
        },
        "files": files,
    }
    save_provenance(outdir, "fmnist", record)


# ---- scikit-learn's bundled sets ---------------------------------------------------------------

SKLEARN_SETS = {
    "digits": {
        "loader": "load_digits",
        "call": "sklearn.datasets.load_digits()",
        "data_files": ["digits.csv.gz"],
        "descr": "digits.rst",
        "title": "Optical recognition of handwritten digits (8 x 8)",
        "x_role": "64 features: an 8 x 8 image, row-major, pixel counts 0..16",
        "y_role": "the digit 0..9 (a number)",
        "origin": "UCI ML repository, 'Optical Recognition of Handwritten Digits' (the test set "
                  "of that collection), E. Alpaydin, C. Kaynak, 1998; "
                  "https://archive.ics.uci.edu/ml/datasets/Optical+Recognition+of+Handwritten+Digits",
        "citation": "E. Alpaydin, C. Kaynak. Optical Recognition of Handwritten Digits. UCI "
                    "Machine Learning Repository, 1998. C. Kaynak (1995), Methods of Combining "
                    "Multiple Classifiers and Their Applications to Handwritten Digit "
                    "Recognition, MSc thesis, Bogazici University.",
        "preprocessing": "pixels int -> float64, digit int -> float64 (exact)",
    },
    "diabetes": {
        "loader": "load_diabetes",
        "call": "sklearn.datasets.load_diabetes()  (scaled=True, its default)",
        "data_files": ["diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"],
        "descr": "diabetes.rst",
        "title": "Diabetes (Efron, Hastie, Johnstone, Tibshirani 2004)",
        "x_role": "10 baseline variables (age, sex, bmi, bp, s1..s6), as load_diabetes gives "
                  "them: every column centred and scaled to unit sum of squares by scikit-learn",
        "y_role": "disease progression one year after baseline (a number, 25..346)",
        "origin": "https://www4.stat.ncsu.edu/~boos/var.select/diabetes.html (scikit-learn's "
                  "description names this source URL)",
        "citation": "Bradley Efron, Trevor Hastie, Iain Johnstone, Robert Tibshirani. Least "
                    "Angle Regression. Annals of Statistics 32(2), 407-499, 2004.",
        "preprocessing": "the loader's own: load_diabetes(scaled=True) centres each feature "
                         "column and divides it by its standard deviation times sqrt(442) "
                         "(descr/diabetes.rst); the export adds nothing; the target is "
                         "untouched",
    },
    "breast_cancer": {
        "loader": "load_breast_cancer",
        "call": "sklearn.datasets.load_breast_cancer()",
        "data_files": ["breast_cancer.csv"],
        "descr": "breast_cancer.rst",
        "title": "Breast cancer Wisconsin (diagnostic)",
        "x_role": "30 features of cell nuclei (mean, standard error and worst of 10 "
                  "measurements), in their own units",
        "y_role": "0 = malignant (212 rows), 1 = benign (357 rows), scikit-learn's coding",
        "origin": "UCI ML repository, 'Breast Cancer Wisconsin (Diagnostic)', W. H. Wolberg, "
                  "W. N. Street, O. L. Mangasarian, 1995",
        "citation": "W. N. Street, W. H. Wolberg, O. L. Mangasarian. Nuclear feature extraction "
                    "for breast tumor diagnosis. IS&T/SPIE 1993 International Symposium on "
                    "Electronic Imaging: Science and Technology, vol. 1905, 861-870, 1993.",
        "preprocessing": "features float64 as loaded, target int -> float64 (exact)",
    },
}


def sklearn_check():
    try:
        import sklearn.datasets  # noqa: F401  (only the check)
    except ImportError as e:
        raise Refused("scikit-learn is not importable by %s (%s): install python3-sklearn "
                      "(scripts/setup.sh does)" % (sys.executable, e))


def export_sklearn(outdir, max_rows, name):
    import sklearn
    import sklearn.datasets
    spec = SKLEARN_SETS[name]
    bunch = getattr(sklearn.datasets, spec["loader"])()
    n = limit(bunch.data.shape[0], max_rows)
    x = np.asarray(bunch.data[:n], dtype=np.float64)
    y = np.asarray(bunch.target[:n], dtype=np.float64)
    files = [save_npy(outdir, name + "_x.npy", x, spec["x_role"]),
             save_npy(outdir, name + "_y.npy", y, spec["y_role"])]
    datadir = os.path.join(os.path.dirname(sklearn.datasets.__file__), "data")
    descr = os.path.join(os.path.dirname(sklearn.datasets.__file__), "descr", spec["descr"])
    deb = dpkg_version("python3-sklearn")
    source = {
        "kind": "scikit-learn",
        "loader": spec["call"],
        "scikit_learn_version": sklearn.__version__,
        "debian_package": "python3-sklearn" if deb else None,
        "debian_version": deb,
        "files": [{"file": os.path.join(datadir, f),
                   "sha256": sha256_file(os.path.join(datadir, f))}
                  for f in spec["data_files"] if os.path.isfile(os.path.join(datadir, f))],
        "description": descr,
        "origin": spec["origin"],
    }
    record = {
        "dataset": name,
        "title": spec["title"],
        "generated_by": "scripts/datasets.sh (dpdyn)",
        "source": source,
        "licence": {
            "spdx": None,
            "name": "not stated by scikit-learn for this data set",
            "evidence": "scikit-learn's description (%s) names the origin above and states no "
                        "licence; the copy is a file of scikit-learn, whose Debian copyright "
                        "file (/usr/share/doc/python3-sklearn/copyright, 'Files: *') puts all "
                        "of scikit-learn under BSD-3-Clause; cite the origin (docs/datasets.md)"
                        % spec["descr"],
        },
        "citation": spec["citation"],
        "split": "none: all %d rows, in the loader's order (any train/test split is dpdyn's, "
                 "test_fraction)" % bunch.data.shape[0],
        "max_rows": max_rows,
        "rows_exported": n,
        "preprocessing": PREPROCESSING + "; " + spec["preprocessing"],
        "files": files,
    }
    save_provenance(outdir, name, record)


def main(argv):
    if len(argv) != 4:
        raise Refused("usage: datasets.py OUTDIR ONLY MAX_ROWS (run scripts/datasets.sh)")
    outdir, only, max_rows = argv[1], argv[2], argv[3]
    if not os.path.isdir(outdir):
        raise Refused("OUTDIR %r is not a directory" % outdir)
    names = [s for s in only.split(",") if s] if only else list(NAMES)
    for s in names:
        if s not in NAMES:
            raise Refused("unknown data set %r (allowed: %s)" % (s, ", ".join(NAMES)))
    names = [s for s in NAMES if s in names]  # a fixed order, each once
    max_rows = int(max_rows) if max_rows else None
    if max_rows is not None and max_rows < 1:
        raise Refused("--max-rows must be a positive integer")
    # every source is checked before anything is written
    fm_dir = fmnist_check() if "fmnist" in names else None
    if any(s != "fmnist" for s in names):
        sklearn_check()
    for s in names:
        if s == "fmnist":
            export_fmnist(outdir, max_rows, fm_dir)
        else:
            export_sklearn(outdir, max_rows, s)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Refused as e:
        print("datasets: %s" % e, file=sys.stderr)
        sys.exit(1)
