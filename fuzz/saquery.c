/* Fuzz target: a `saquery PR` dump replayed by the SA (emu/ib/sa_replay.c, the fabric file's
 * `sm replay=`). The input is the dump; a fresh SA of fixtures/ib.fabric loads it, then
 * answers a GetTable of every PathRecord, which reads the replayed records back. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/ib/mad.h"
#include "emu/ib/sa.h"
#include "emu/sim/fabric.h"
#include "fuzz/fuzz_env.h"

static struct emu_fabric *fab;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct emu_error err;

	(void)argc;
	(void)argv;
	fuzz_env_init();
	fab = emu_fabric_load(fuzz_fixture("ib.fabric"), &err);
	if (!fab)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t q[EMU_MAD_LEN] = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
				   EMU_SA_CLASS_VERSION, EMU_MAD_METHOD_GET_TABLE };
	struct emu_error err;
	struct emu_sa *sa = emu_sa_new(fab, NULL);
	char *text = malloc(size + 1);
	uint8_t *resp = NULL;
	size_t resp_len = 0;

	if (!sa || !text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	if (emu_sa_replay_saquery(sa, text, "fuzz.saquery", &err) > 0) {
		q[16] = EMU_SA_ATTR_PATH_RECORD >> 8;
		q[17] = EMU_SA_ATTR_PATH_RECORD & 0xff;
		if (!emu_sa_handle(sa, q, sizeof(q), &resp, &resp_len))
			free(resp);
	}
	free(text);
	emu_sa_free(sa);
	return 0;
}
