/* dpdyn command-line entry point.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "dpdyn/dpd.h"

int main(void) {
  printf("dpdyn %s\n", dpd_version());
  return 0;
}
