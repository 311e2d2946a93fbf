/* Fuzz harness: the input is a NumPy .npy file (a user's feature or label array, model=nc)
 * read by dpd__read_npy (src/core/npy.c) with 64 MiB of values at most, then its header alone.
 * SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include "core/npy_impl.h"

int main(int argc, char **argv) {
  dpd__npy_info info;
  double *data = NULL;
  dpd_err err;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  fuzz_init();
  dpd_err_reset(&err);
  int status = dpd__read_npy("features", argv[1], FUZZ_MAX_MEMORY, &data, &info, &err);
  fuzz_note("read", status, &err);
  if (status == DPD_OK) {
    /* Touch every value read, as the loader does. */
    volatile double sum = 0.0;
    for (size_t i = 0; i < info.rows * info.cols; i++) {
      sum += data[i];
    }
    (void)sum;
  }
  free(data);
  dpd_err_reset(&err);
  fuzz_note("header", dpd__npy_header("labels", argv[1], &info, &err), &err);
  return fuzz_done();
}
