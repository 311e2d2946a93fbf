/* Progress of a run over independent replicates (simulate, sde, rf DP-GD): the callback type
 * their configs take.
 * SPDX-License-Identifier: MIT
 *
 * The library never prints. A run that takes long reports how far it is through an optional
 * callback instead, and the caller decides what to show (the dpdyn CLI draws a line on stderr
 * when stderr is a terminal). The callback never changes a result: replicate r always uses
 * the random stream (seed, r) and writes only its own slots, whatever the thread count and
 * whatever the callback does, short of asking for a stop. */
#ifndef DPD_REPLICATE_H
#define DPD_REPLICATE_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with `done` units of work finished out of `total` (the config says which units:
 * replicates, or steps over all replicates). `user` is the config's progress_user (borrowed,
 * passed through untouched). Contract:
 *  - it is called only from the thread that called the run (never from an OpenMP worker), so
 *    it needs no locking;
 *  - `done` increases from call to call, 0 < done <= total, and the last call of a run that
 *    completes has done == total; intermediate values may be skipped; the one exception is a
 *    heartbeat: when 100 ms pass with no new unit done, the run calls it again with the same
 *    `done` (so that a stop request is heard during long units; done may then still be 0);
 *  - returning non-zero asks the run to stop: replicates not yet started are skipped, and the
 *    run returns DPD_ECANCELLED with no result. Return 0 to continue. */
typedef int (*dpd_progress_fn)(void *user, size_t done, size_t total);

#ifdef __cplusplus
}
#endif
#endif /* DPD_REPLICATE_H */
