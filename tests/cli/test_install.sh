#!/usr/bin/env bash
# The install target and the pkg-config file: install into a temporary prefix,
# build a small program against the installed headers and library with
# `pkg-config --cflags --libs dpdyn`, and run it.
# usage: test_install.sh DPDYN_BINARY SOURCE_DIR
set -eu
build=$(dirname "$1")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pc_dir=$(dirname "$(find "$prefix" -name dpdyn.pc | head -n 1)")
# The .pc file records the configured prefix; point pkg-config at the temporary one.
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --define-variable=prefix="$prefix" --cflags --libs dpdyn)
cat >"$prefix/user.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <dpdyn/dpd.h>
int main(void) {
  dpd_err err;
  double eps = 0.0;
  if (dpd_privacy_eps_tight(0.5, 1e-5, &eps, &err) != DPD_OK) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  printf("dpdyn %s: eps_tight(0.5, 1e-5) = %.6f, mu_c(1, 0.5) = %.6f\n", dpd_version(), eps,
         dpd_clip_mu_eval(1.0, 0.5));
  return fabs(eps - 4.728387) < 1e-5 ? 0 : 1;
}
C
cc -std=c11 -Wall -Wextra -Werror "$prefix/user.c" -o "$prefix/user" $flags -lm
LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libdpdyn.so' | head -n 1)") "$prefix/user"
test -x "$prefix/bin/dpdyn"
test -f "$prefix/share/dpdyn/models/linreg/quickstart.ini"
echo "install: 1 passed, 0 failed"
