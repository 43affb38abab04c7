/* Binding into import tables (docs/time-layer.md "Binding into import tables").
 *
 * A process on the emulated libraries loads them through LD_LIBRARY_PATH, after libc in the
 * lookup scope, so a function of ours cannot interpose a libc call by its name, and the
 * drop-in libraries export exactly rdma-core's names. What must reach the emulator instead
 * of libc (the program's clock and sleeps) is therefore bound object by object: each import
 * of a listed name, in the GOT of every loaded object, is rewritten to point at our
 * replacement. The dynamic linker, the vDSO, glibc's own libraries, sanitizer runtimes and
 * valgrind's preloads are never touched (emu_bind_is_system); the caller adds its own objects
 * with skip(). */
#ifndef RDMAEMU_EMU_SIM_BIND_H
#define RDMAEMU_EMU_SIM_BIND_H

#include <stdbool.h>
#include <stddef.h>

struct emu_bind_sym {
	const char *name; /* the imported symbol, e.g. "clock_gettime" */
	void *repl;       /* what imports of it are bound to */
	void **orig;      /* out: the function the imports resolved to before (libc's, or an
			     interposer's ahead of it), NULL when no object defines it */
};

/* Binds, in every object loaded now, each import (JUMP_SLOT and GLOB_DAT relocations: calls
 * through the PLT, -fno-plt calls and address-taken functions) of a name in syms to its repl,
 * except in system objects and in objects for which skip(path) is true (path as
 * dl_iterate_phdr's dlpi_name: "" for the main program; skip may be NULL). *syms[i].orig is
 * set before any binding. In a program linked without -pie that takes the address of a name,
 * the skipped objects' imports holding that address (the program's PLT entry, which leads to
 * the replacement) get the original instead. Names are compared exactly, versions ignored.
 * The table is copied. skip runs with the loader's list lock held: it must not dlopen,
 * dlclose or dlsym.
 * Returns 0, -EBUSY when installed already, -EINVAL, -ENOMEM, -ENOSYS on an architecture
 * whose relocation types are not known here (nothing bound), or the -errno of a failed
 * mprotect (the other imports are bound). */
int emu_bind_install(const struct emu_bind_sym *syms, size_t n, bool (*skip)(const char *path));

/* Binds the objects loaded since (after each dlopen/dlmopen). Objects done before are left as
 * they are, except that an import the loader wrote again (an object relocated while the last
 * scan ran, or reloaded at the same address) is bound again. No-op when not installed. */
void emu_bind_rescan(void);

/* Restores every bound import to the value it held before (a PLT stub under lazy binding)
 * and forgets the table: emu_bind_install may be called again. For a child that must run on
 * the real clock. */
void emu_bind_uninstall(void);

/* The number of import slots written now, over all objects. */
size_t emu_bind_count(void);

/* The objects never bound into, by path: the dynamic linker, glibc's libraries (libc,
 * libpthread, librt, libdl, libm, ...), the sanitizer runtimes and valgrind's preloads. */
bool emu_bind_is_system(const char *path);

#endif
