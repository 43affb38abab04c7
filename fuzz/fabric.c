/* Fuzz target: a fabric file (rdmaemu-fabric(5), emu/sim/fabric_load.c). The input is the
 * file's text; the names it includes resolve in the target's private folder, which holds
 * copies of fixtures/ib.topo and fixtures/ib-hosts.data (so that ib.fabric loads whole) and
 * nothing else. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/fabric.h"
#include "fuzz/fabric_use.h"
#include "fuzz/fuzz_env.h"

static void copy_fixture(const char *name)
{
	static char buf[1 << 16];
	FILE *fp = fopen(fuzz_fixture(name), "r");
	size_t n;

	if (!fp)
		abort();
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	fuzz_put(name, buf, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	copy_fixture("ib.topo");
	copy_fixture("ib-hosts.data");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_error err;
	struct emu_fabric *f;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	f = emu_fabric_load_text(text, "fuzz.fabric", fuzz_dir(), &err);
	if (f) {
		fuzz_fabric_use(f);
		emu_fabric_free(f);
	}
	free(text);
	return 0;
}
