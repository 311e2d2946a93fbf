#!/usr/bin/env bash
# scripts/datasets.sh end to end (docs/datasets.md), into directories whose names hold spaces,
# quotes, a newline and a leading dash:
#   1. scikit-learn's digits and diabetes: shapes, dtypes and values (/usr/bin/python3), every
#      sha256 in the provenance files against sha256sum, a second run byte-identical;
#   2. Fashion-MNIST from the Debian package with --max-rows 200 (skipped, with a message, when
#      dataset-fashion-mnist is not installed), checked against a direct read of the IDX files;
#   3. the IDX parser on small generated files (DPD_FASHION_MNIST_DIR): exact values, the +-1
#      target rule, and corrupt or missing files refused before anything is written;
#   4. hostile OUTDIR and options: -x is refused (exit 1), -- -x and a newline work, a
#      non-directory is refused, nothing in a name is run as code.
# Nothing is downloaded. usage: test_datasets.sh DPDYN_BINARY SOURCE_DIR
set -u
src=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
script=$src/scripts/datasets.sh
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "test_datasets: /usr/bin/python3 cannot import numpy (Debian python3-numpy), skipped"
  finish test_datasets
  exit
fi
have_sklearn=0
"$py" -c 'import sklearn.datasets' 2>/dev/null && have_sklearn=1

# check DIR NAME SPEC...: NAME.provenance.json in DIR lists exactly the files of the SPECs
# (FILE:SHAPE:DTYPE:RULE, SHAPE like 200x784, RULE one of any, digit, pm1, pixel) with those
# shapes and dtypes, and every file meets its rule. Paths reach Python as arguments only.
check() {
  "$py" - "$@" <<'EOF'
import json, os, sys
import numpy as np
d, name, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
prov = json.load(open(os.path.join(d, name + ".provenance.json")))
listed = {f["file"]: f for f in prov["files"]}
want = [s.split(":") for s in specs]
assert sorted(listed) == sorted(w[0] for w in want), (sorted(listed), want)
for f, shape, dtype, rule in want:
    a = np.load(os.path.join(d, f), allow_pickle=False)
    shape = tuple(int(v) for v in shape.split("x"))
    assert a.shape == shape and str(a.dtype) == dtype, (f, a.shape, a.dtype)
    assert listed[f]["shape"] == list(shape) and listed[f]["dtype"] == dtype, (f, listed[f])
    assert a.flags.c_contiguous and np.all(np.isfinite(a)), f
    ok = {"any": True,
          "digit": np.all((a >= 0) & (a <= 9) & (a == np.round(a))),
          "pm1": np.all(np.abs(a) == 1),
          "pixel": np.all((a >= 0) & (a <= 255) & (a == np.round(a)))}[rule]
    assert ok, (f, rule)
for key in ("source", "licence", "citation", "split", "preprocessing"):
    assert prov.get(key), key
EOF
}
# sha_ok DIR NAME: every sha256 of NAME.provenance.json equals sha256sum's
sha_ok() {
  local listed f sum
  listed=$("$py" - "$1/$2.provenance.json" <<'EOF'
import json, sys
for f in json.load(open(sys.argv[1]))["files"]:
    print(f["sha256"], f["file"])
EOF
  ) || return 1
  [ -n "$listed" ] || return 1
  while read -r sum f; do
    [ "$(sha256sum <"$1/$f" | cut -d' ' -f1)" = "$sum" ] || return 1
  done <<<"$listed"
}
# a directory's file sums, for the rerun comparison
sums() { (cd -- "$1" && sha256sum -- *); }

# ---- 1. scikit-learn's digits and diabetes ----------------------------------------------------
out="$work/real data (exported)"
if [ "$have_sklearn" -eq 0 ]; then
  echo "skip scikit-learn sets: /usr/bin/python3 cannot import sklearn (Debian python3-sklearn)"
else
  if "$script" --only digits,diabetes "$out" >/dev/null 2>"$work/err"; then
    ok "digits,diabetes exported into a directory with spaces"
  else
    bad "digits,diabetes: $(head -3 "$work/err")"
  fi
  check "$out" digits digits_x.npy:1797x64:float64:any digits_y.npy:1797:float64:digit &&
    ok "digits: 1797 x 64 and 1797, float64, digits 0..9" || bad "digits shapes/dtypes"
  check "$out" diabetes diabetes_x.npy:442x10:float64:any diabetes_y.npy:442:float64:any &&
    ok "diabetes: 442 x 10 and 442, float64" || bad "diabetes shapes/dtypes"
  sha_ok "$out" digits && sha_ok "$out" diabetes && ok "provenance sha256 = sha256sum (digits, diabetes)" ||
    bad "a provenance sha256 differs from the file's"
  [ ! -e "$out/fmnist.provenance.json" ] && [ ! -e "$out/breast_cancer_x.npy" ] &&
    ok "--only exports nothing else" || bad "--only digits,diabetes wrote other sets"
  sums "$out" >"$work/sums1"
  "$script" --only=diabetes,digits -- "$out" >/dev/null 2>&1
  sums "$out" >"$work/sums2"
  if cmp -s "$work/sums1" "$work/sums2" && [ -z "$(find "$out" -name '.*.tmp-*')" ]; then
    ok "a second run is byte-identical, no temporary file left"
  else
    bad "a second run changed the files"
  fi
  "$script" --only breast_cancer --max-rows 50 "$out" >/dev/null 2>&1 &&
    check "$out" breast_cancer breast_cancer_x.npy:50x30:float64:any breast_cancer_y.npy:50:float64:any &&
    sha_ok "$out" breast_cancer && ok "breast_cancer with --max-rows 50: 50 x 30" ||
    bad "breast_cancer --max-rows 50"
fi

# ---- 2. Fashion-MNIST from the Debian package (200 rows) ---------------------------------------
deb=/usr/share/datasets/fashion-mnist
if ! dpkg-query -W -f='${Status}' dataset-fashion-mnist 2>/dev/null | grep -q "install ok installed" ||
  [ ! -f "$deb/train-images-idx3-ubyte.gz" ]; then
  echo "skip Fashion-MNIST: the Debian package dataset-fashion-mnist is not installed (scripts/setup.sh)"
else
  fm="$work/fashion mnist"
  if "$script" --only fmnist --max-rows 200 "$fm" >/dev/null 2>"$work/err"; then
    ok "fmnist --max-rows 200 exported"
  else
    bad "fmnist: $(head -3 "$work/err")"
  fi
  check "$fm" fmnist fmnist_train_x.npy:200x784:float32:pixel fmnist_train_y.npy:200:float64:digit \
    fmnist_train_yreg.npy:200:float64:pm1 fmnist_test_x.npy:200x784:float32:pixel \
    fmnist_test_y.npy:200:float64:digit fmnist_test_yreg.npy:200:float64:pm1 &&
    ok "fmnist: 200 x 784 float32 pixels, float64 labels and +-1 targets" || bad "fmnist shapes/dtypes"
  sha_ok "$fm" fmnist && ok "fmnist provenance sha256 = sha256sum" || bad "fmnist sha256"
  # against a direct read of the package's files (offsets 16 and 8 of the IDX headers)
  if "$py" - "$fm" "$deb" "$(dpkg-query -W -f='${Version}' dataset-fashion-mnist)" <<'EOF'
import gzip, json, os, sys
import numpy as np
d, deb, version = sys.argv[1:4]
for split, pre in (("train", "train"), ("test", "t10k")):
    raw = gzip.open(os.path.join(deb, pre + "-images-idx3-ubyte.gz")).read(16 + 200 * 784)
    lab = gzip.open(os.path.join(deb, pre + "-labels-idx1-ubyte.gz")).read(8 + 200)
    x = np.frombuffer(raw, np.uint8, offset=16).reshape(200, 784)
    y = np.frombuffer(lab, np.uint8, offset=8)
    assert np.array_equal(np.load(os.path.join(d, "fmnist_%s_x.npy" % split)), x)
    assert np.array_equal(np.load(os.path.join(d, "fmnist_%s_y.npy" % split)), y)
    yreg = np.where(np.isin(y, [0, 2, 3, 4, 6]), 1.0, -1.0)
    assert np.array_equal(np.load(os.path.join(d, "fmnist_%s_yreg.npy" % split)), yreg)
p = json.load(open(os.path.join(d, "fmnist.provenance.json")))
assert p["max_rows"] == 200 and p["source"]["version"] == version, p["source"]
assert p["source"]["package"] == "dataset-fashion-mnist" and p["licence"]["spdx"] == "MIT"
EOF
  then
    ok "fmnist rows = the package's IDX bytes, provenance names package $(dpkg-query -W -f='${Version}' dataset-fashion-mnist) and MIT"
  else
    bad "fmnist differs from the package's files"
  fi
fi

# ---- 3. the IDX parser on generated files ------------------------------------------------------
idx=$work/idx
mkdir -p "$idx/good" "$idx/badmagic" "$idx/short" "$idx/empty"
"$py" - "$idx" <<'EOF'
import gzip, os, shutil, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
def idx(path, a, magic=None):
    head = bytes([0, 0, 8, a.ndim]) if magic is None else magic
    head += b"".join(int(s).to_bytes(4, "big") for s in a.shape)
    with gzip.open(path, "wb") as f:
        f.write(head + a.astype(np.uint8).tobytes())
for split, pre, n in (("train", "train", 7), ("test", "t10k", 3)):
    x = rng.integers(0, 256, size=(n, 28, 28))
    y = np.arange(n) % 10 if split == "train" else np.array([9, 3, 5])
    idx(os.path.join(d, "good", pre + "-images-idx3-ubyte.gz"), x)
    idx(os.path.join(d, "good", pre + "-labels-idx1-ubyte.gz"), y)
    np.save(os.path.join(d, "%s_x.npy" % split), x.reshape(n, 784))
    np.save(os.path.join(d, "%s_y.npy" % split), y)
for bad in ("badmagic", "short"):
    for f in os.listdir(os.path.join(d, "good")):
        shutil.copy(os.path.join(d, "good", f), os.path.join(d, bad, f))
x = rng.integers(0, 256, size=(7, 28, 28))
idx(os.path.join(d, "badmagic", "train-images-idx3-ubyte.gz"), x, magic=bytes([0, 0, 9, 3]))
with gzip.open(os.path.join(d, "short", "t10k-labels-idx1-ubyte.gz"), "wb") as f:
    f.write(bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + bytes([1, 2]))
EOF
g="$work/generated idx"
if DPD_FASHION_MNIST_DIR=$idx/good "$script" --only fmnist "$g" >/dev/null 2>"$work/err" &&
  check "$g" fmnist fmnist_train_x.npy:7x784:float32:pixel fmnist_train_y.npy:7:float64:digit \
    fmnist_train_yreg.npy:7:float64:pm1 fmnist_test_x.npy:3x784:float32:pixel \
    fmnist_test_y.npy:3:float64:digit fmnist_test_yreg.npy:3:float64:pm1 &&
  "$py" - "$g" "$idx" <<'EOF'
import json, os, sys
import numpy as np
g, d = sys.argv[1:3]
for split in ("train", "test"):
    x = np.load(os.path.join(d, split + "_x.npy"))
    y = np.load(os.path.join(d, split + "_y.npy"))
    assert np.array_equal(np.load(os.path.join(g, "fmnist_%s_x.npy" % split)), x)
    assert np.array_equal(np.load(os.path.join(g, "fmnist_%s_y.npy" % split)), y)
    torso = (y == 0) | (y == 2) | (y == 3) | (y == 4) | (y == 6)
    assert np.array_equal(np.load(os.path.join(g, "fmnist_%s_yreg.npy" % split)),
                          np.where(torso, 1.0, -1.0))
p = json.load(open(os.path.join(g, "fmnist.provenance.json")))
assert p["source"]["package"] is None and p["rows_exported"] == {"train": 7, "test": 3}
EOF
then
  ok "generated IDX files: every pixel and label exact, +-1 rule, provenance says not the package"
else
  bad "generated IDX files: $(head -3 "$work/err")"
fi
for case in badmagic:"not an IDX file" short:"truncated" empty:"not found in DPD_FASHION_MNIST_DIR"; do
  name=${case%%:*}
  o="$work/refused $name"
  if DPD_FASHION_MNIST_DIR=$idx/$name "$script" --only fmnist "$o" >/dev/null 2>"$work/err"; then
    bad "IDX $name: exit 0"
  elif [ $? -eq 1 ] && grep -q "${case#*:}" "$work/err" && [ -z "$(ls -A "$o")" ]; then
    ok "IDX $name: exit 1, nothing written: $(head -1 "$work/err")"
  else
    bad "IDX $name: $(head -1 "$work/err")"
  fi
done

# ---- 4. hostile OUTDIR and options -------------------------------------------------------------
h=$work/hostile
mkdir -p "$h"
# refused ARGS... : exit 1 with one "datasets:" line, run in $h, which stays empty
refused() {
  local what=$1
  shift
  if (cd "$h" && "$script" "$@") >/dev/null 2>"$work/err"; then
    bad "$what: exit 0"
  elif [ $? -eq 1 ] && grep -q '^datasets: ' "$work/err" && [ -z "$(ls -A "$h")" ]; then
    ok "$what refused: $(head -1 "$work/err")"
  else
    bad "$what: $(head -2 "$work/err")"
  fi
}
refused "OUTDIR -x (taken as an option)" -x
refused "--only bogus" --only bogus out
refused "--only empty" --only= out
refused "--max-rows 0" --max-rows 0 out
refused "--max-rows -3" --max-rows -3 out
refused "no OUTDIR" --only digits
refused "two OUTDIRs" a b
refused "empty OUTDIR" ''
: >"$work/plain file"
if "$script" --only digits "$work/plain file" >/dev/null 2>"$work/err"; then
  bad "a regular file as OUTDIR: exit 0"
elif [ $? -eq 1 ] && grep -q "is not a directory" "$work/err" && [ ! -s "$work/plain file" ]; then
  ok "a regular file as OUTDIR: exit 1, untouched: $(head -1 "$work/err")"
else
  bad "a regular file as OUTDIR: $(head -1 "$work/err")"
fi
if [ "$have_sklearn" -eq 1 ]; then
  if (cd "$h" && "$script" --only digits -- -x) >/dev/null 2>"$work/err" && [ -d "$h/-x" ] &&
    sha_ok "$h/-x" digits; then
    ok "-- -x: exported into ./-x"
  else
    bad "-- -x: $(head -2 "$work/err")"
  fi
  nl="$work/new
line \$(touch pwned) \`touch pwned\` 'q\"; touch pwned"
  if (cd "$work" && "$script" --max-rows 10 --only digits "$nl") >/dev/null 2>"$work/err" &&
    check "$nl" digits digits_x.npy:10x64:float64:any digits_y.npy:10:float64:digit &&
    sha_ok "$nl" digits && [ ! -e "$work/pwned" ] && [ ! -e "$src/pwned" ]; then
    ok "an OUTDIR with a newline, quotes and \$(...): exported there, nothing run"
  else
    bad "OUTDIR with a newline: $(head -2 "$work/err")"
  fi
fi

finish test_datasets
