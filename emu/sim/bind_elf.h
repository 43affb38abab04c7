/* A loaded object's import slots, for bind.c: its dynamic section read in memory, the
 * relocations that fill a GOT slot with a symbol's address (one table of types per
 * architecture), and writes into slots whatever the protection of their page. */
#ifndef RDMAEMU_EMU_SIM_BIND_ELF_H
#define RDMAEMU_EMU_SIM_BIND_ELF_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One relocation table: DT_JMPREL, DT_RELA or DT_REL. */
struct emu_bind_reltab {
	const unsigned char *at;
	size_t size, ent;
	bool rela;
};

struct emu_bind_view {
	uintptr_t base;   /* dlpi_addr: what the object's addresses are relative to */
	uintptr_t lo, hi; /* the span of its PT_LOAD segments in memory */
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	struct emu_bind_reltab tab[3];
};

/* Fills *v from the program headers of a loaded object; false when it has no dynamic section
 * or no symbol table (nothing to bind). */
bool emu_bind_view_init(struct emu_bind_view *v, const struct dl_phdr_info *info);

/* Whether addr lies inside the object's loaded segments. */
bool emu_bind_view_holds(const struct emu_bind_view *v, const void *addr);

/* Calls fn for each relocation of the object that fills a GOT slot with the address of an
 * undefined symbol (an import): JUMP_SLOT and GLOB_DAT, without addend. The name is the
 * symbol's, without version. DT_RELA may cover DT_JMPREL too: a slot can come twice. */
typedef void emu_bind_slot_fn(void *arg, void **slot, const ElfW(Sym) *sym, const char *name);
void emu_bind_view_walk(const struct emu_bind_view *v, emu_bind_slot_fn *fn, void *arg);

/* Whether this architecture's slot relocations are known here. */
bool emu_bind_arch_known(void);

/* The protections of the process's mappings, read from /proc/self/maps at the first write
 * that needs them and kept until emu_bind_maps_free (writes restore what they change). */
struct emu_bind_maps {
	struct emu_bind_map *map;
	size_t n;
	bool loaded;
};

/* Stores val into *slot: directly when its page is writable, otherwise with the page made
 * writable for the store and given back its protection. 0 or -errno. */
int emu_bind_slot_write(struct emu_bind_maps *m, void **slot, void *val);

void emu_bind_maps_free(struct emu_bind_maps *m);

/* The function the imports of name resolve to: dlsym(RTLD_DEFAULT, name), except when that is
 * the PLT entry of a program that is not position-independent (bind_orig.c): then *canonical
 * is set to that entry (else NULL) and the function behind it is returned. NULL when no
 * object defines it. Takes the loader's lock. */
void *emu_bind_resolve(const char *name, void **canonical);

#endif
