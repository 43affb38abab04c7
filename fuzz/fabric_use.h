/* What the emulator does with a fabric once it loaded, for the loaders' targets: everything
 * that reads the model (docs/fuzzing.md). */
#ifndef RDMAEMU_FUZZ_FABRIC_USE_H
#define RDMAEMU_FUZZ_FABRIC_USE_H

#include "emu/sim/fabric.h"

/* Prints it as `rdmaemu fabric show` does (to /dev/null), builds its wire and its SA, and
 * frees all of that (not f). */
void fuzz_fabric_use(const struct emu_fabric *f);

#endif
