/* Forwarding header: the kernel dispatch moved to src/isa/ (isa/isa_impl.h), a module below
 * both src/core and src/rng, so that src/rng calls nothing of src/core. New code includes
 * "isa/isa_impl.h".
 * TODO(bounds): replace the remaining includes of "core/isa_impl.h" and remove this file (#26)
 * SPDX-License-Identifier: MIT */
#include "isa/isa_impl.h"
