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
  if (fabs(eps - 4.728387) >= 1e-5) {
    return 1;
  }
  /* the registry: rf's account with mu = 1 reports zCDP 1/2 */
  {
    const dpd_model_type *m = dpd_model_lookup("rf");
    dpd_keys *keys;
    dpd_output *out;
    dpd_run_env env = dpd_run_env_default();
    const cJSON *privacy;
    if (m == NULL || dpd_model_keys_create(m, "account", &keys, &err) != DPD_OK ||
        dpd_keys_set(keys, "mu", "1", &err) != DPD_OK ||
        dpd_model_run(m, "account", keys, &env, &out, &err) != DPD_OK) {
      fprintf(stderr, "registry: %s\n", err.reason);
      return 1;
    }
    privacy = cJSON_GetObjectItemCaseSensitive(out->summary, "privacy");
    printf("rf account mu = 1: zcdp = %g\n",
           cJSON_GetObjectItemCaseSensitive(privacy, "zcdp")->valuedouble);
    if (cJSON_GetObjectItemCaseSensitive(privacy, "zcdp")->valuedouble != 0.5) {
      return 1;
    }
    dpd_output_free(out);
    dpd_keys_free(keys);
  }
  return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror "$prefix/user.c" -o "$prefix/user" $flags -lm
LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libdpdyn.so' | head -n 1)") "$prefix/user"
test -x "$prefix/bin/dpdyn"
test -f "$prefix/share/dpdyn/models/linreg/quickstart.ini"
echo "install: 1 passed, 0 failed"
