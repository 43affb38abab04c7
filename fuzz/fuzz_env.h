/* What every fuzz target shares (docs/fuzzing.md): a quiet process attached to no daemon and
 * with no bound clocks, the fixture fabrics, and a private scratch folder for inputs that the
 * loaders can only read from a file. */
#ifndef RDMAEMU_FUZZ_ENV_H
#define RDMAEMU_FUZZ_ENV_H

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry points every target defines. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Once, before anything else: no daemon, no fabric from the environment, the engine's time
 * layer off (libFuzzer times its runs with the real clocks). */
void fuzz_env_init(void);
/* fixtures/NAME of the source tree. */
const char *fuzz_fixture(const char *name);
/* Attaches this process to fixtures/FILE as host NODE (NULL: the first), dropping any earlier
 * attachment: 0, or -1 (the fixture is broken: the target aborts). */
int fuzz_attach(const char *file, const char *node);
/* A private folder removed at exit; fuzz_put writes NAME in it (whole, replacing) and returns
 * its path (static storage, valid until the next call). */
const char *fuzz_dir(void);
const char *fuzz_put(const char *name, const void *data, size_t len);

/* Input cursor: bytes taken from the front of the input, zeros once it is used up. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};
uint8_t fuzz_u8(struct fuzz_in *in);
uint16_t fuzz_u16(struct fuzz_in *in);
uint32_t fuzz_u32(struct fuzz_in *in);
/* Up to want bytes (fewer at the end): their start, *got how many. */
const uint8_t *fuzz_take(struct fuzz_in *in, size_t want, size_t *got);

#endif
