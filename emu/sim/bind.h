/* Binding a process's imports to other functions at run time, in the import tables (GOT) of
 * its loaded objects: what the time layer (emu/sim/apptime.h) uses, since the emulated
 * libraries come after the C library in the program's lookup scope and must not add exports. */
#ifndef RDMAEMU_EMU_BIND_H
#define RDMAEMU_EMU_BIND_H

#include <stdbool.h>
#include <stddef.h>

struct emu_bind_sym {
	const char *name; /* the imported symbol, versions ignored */
	void *repl;       /* what imports of it are bound to */
	void **orig;      /* the caller's: the function imports resolved to before */
};

/* Binds every import (JUMP_SLOT and GLOB_DAT relocations) of a name in syms to its repl, in
 * every loaded object but those skip() names (path as dl_iterate_phdr gives it, "" for the
 * program). syms stays the caller's. 0 or -errno (-ENOSYS on an architecture without the
 * relocation table here). */
int emu_bind_install(const struct emu_bind_sym *syms, size_t n, bool (*skip)(const char *path));
/* Binds the objects loaded since (after a dlopen). */
void emu_bind_rescan(void);
/* The dynamic linker, the vDSO, the C library and its satellites, sanitizer runtimes and
 * valgrind's preloads: objects never bound, and where an original must live. */
bool emu_bind_is_system(const char *path);

#endif
