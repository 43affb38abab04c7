/* The fuzz targets' shared set-up (fuzz_env.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/sim/apptime.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "fuzz/fuzz_env.h"
#include "rdmaemu/ctl.h"

static char dir[PATH_MAX];

static void dir_remove(void)
{
	char cmd[PATH_MAX + 16];

	if (!dir[0])
		return;
	/* only files fuzz_put wrote: the folder is flat */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

void fuzz_env_init(void)
{
	static const char *const vars[] = { "RDMAEMU_DAEMON", "RDMAEMU_FABRIC", "RDMAEMU_NODE",
					    "RDMAEMU_PCAP", "RDMAEMU_TRACE", "RDMAEMU_TIME",
					    "RDMAEMU_SHM" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	emu_apptime_disable();
}

const char *fuzz_fixture(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", FUZZ_FIXTURES, name);
	return path;
}

int fuzz_attach(const char *file, const char *node)
{
	emu_engine_reset();
	emu_process_reset();
	if (rdmaemu_ctl_attach(fuzz_fixture(file), node)) {
		fprintf(stderr, "fuzz: cannot attach to %s: %s\n", fuzz_fixture(file),
			strerror(errno));
		return -1;
	}
	return emu_engine_get() ? 0 : -1;
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		/* In memory when the machine has it: the loaders' targets write their input
		 * over the last one every run, and ext4 flushes a file rewritten through
		 * O_TRUNC at its close: 3,000 runs of the topology seed took 3.4 s in /tmp on
		 * ext4, 1.5 s in /dev/shm. */
		if (!t || !*t)
			t = access("/dev/shm", W_OK | X_OK) ? "/tmp" : "/dev/shm";
		snprintf(dir, sizeof(dir), "%s/rdmaemu-fuzz.XXXXXX", t);
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(dir_remove);
	}
	return dir;
}

const char *fuzz_put(const char *name, const void *data, size_t len)
{
	static char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len)) {
		perror("fuzz: writing the input");
		abort();
	}
	close(fd);
	return path;
}

uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t lo = fuzz_u8(in);

	return (uint16_t)(lo | fuzz_u8(in) << 8);
}

uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t lo = fuzz_u16(in);

	return lo | (uint32_t)fuzz_u16(in) << 16;
}

const uint8_t *fuzz_take(struct fuzz_in *in, size_t want, size_t *got)
{
	const uint8_t *p = in->p;

	*got = want < in->n ? want : in->n;
	in->p += *got;
	in->n -= *got;
	return p;
}
