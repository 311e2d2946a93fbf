/* Gaussian-generation limit of this machine (filled in by the RNG work).
 * SPDX-License-Identifier: MIT */
int main(void) { return 0; }
