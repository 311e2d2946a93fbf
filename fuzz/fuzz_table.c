/* Fuzz harness: the input is a data file (spectrum, theta_star, schedule or account --sequence)
 * read by dpd__read_table with 1 to 2, exactly 1 and exactly 2 columns, 64 MiB of rows at most.
 * SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

#include "core/table_impl.h"

int main(int argc, char **argv) {
  static const size_t ranges[3][2] = {{1, 2}, {1, 1}, {2, 2}};
  dpd_err err;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  fuzz_init();
  for (size_t r = 0; r < 3; r++) {
    double *cols[2] = {NULL, NULL};
    size_t rows = 0, ncols = 0;
    dpd_err_reset(&err);
    int status = dpd__read_table("spectrum", argv[1], ranges[r][0], ranges[r][1], FUZZ_MAX_MEMORY,
                                 cols, &rows, &ncols, &err);
    fuzz_note("read", status, &err);
    if (status == DPD_OK) {
      /* Touch every value read, as the callers do. */
      volatile double sum = 0.0;
      for (size_t i = 0; i < rows; i++) {
        for (size_t c = 0; c < ncols; c++) {
          sum += cols[c][i];
        }
      }
      (void)sum;
    }
    free(cols[0]);
    free(cols[1]);
  }
  return fuzz_done();
}
