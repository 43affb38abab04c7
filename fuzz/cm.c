/* Fuzz target: the CM message codec (emu/ib/cm_mad.c) and the RDMA IP CM header in a REQ's
 * or SIDR_REQ's private data, as a CM agent decodes what arrives on QP1 (IBTA 12.6, annex
 * A11). Input: the MAD. A message that decodes must encode again and decode to the same
 * fields (the ARI and additional information up to their lengths): the target aborts if
 * not. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/ib/cm_mad.h"
#include "emu/ib/mad.h"
#include "fuzz/fuzz_env.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct emu_cm_msg m, again;
	uint8_t *mad = malloc(size ? size : 1), out[EMU_MAD_LEN];
	const char *bad = NULL;
	struct emu_cma_hdr h;
	uint16_t attr = 0, attr2 = 0;
	int rc, pd;

	if (!mad)
		return 0;
	memcpy(mad, data, size);
	memset(&m, 0, sizeof(m));
	rc = emu_cm_unpack_ex(mad, size, &attr, &m, &bad);
	(void)emu_cm_strerror(rc);
	(void)emu_cm_attr_name(attr);
	if (!rc) {
		(void)emu_cm_rej_reason_name(m.reason);
		(void)emu_cm_rej_reason_msg(m.reason);
		(void)emu_cm_sidr_status_name(m.sidr_status);
		(void)emu_cm_msg_response_name(m.message_mraed);
		pd = emu_cm_private_data_size(attr);
		if (m.private_data_len > EMU_CM_PRIVATE_DATA_MAX ||
		    m.private_data_len != (pd < 0 ? 0 : pd))
			abort(); /* unpack reports the whole private data field */
		(void)emu_cma_hdr_unpack(m.private_data, m.private_data_len, &h);
		/* ARI and additional information are written for their lengths only (the ARR
		 * fields of emu/ib/cm_mad.c's tables): what lies past them does not come back */
		memset(m.ari + m.reject_info_len, 0, sizeof(m.ari) - m.reject_info_len);
		memset(m.info + m.info_len, 0, sizeof(m.info) - m.info_len);
		if (!emu_cm_pack_ex(attr, &m, out, &bad)) {
			memset(&again, 0, sizeof(again));
			if (emu_cm_unpack_ex(out, sizeof(out), &attr2, &again, &bad) ||
			    attr2 != attr || memcmp(&m, &again, sizeof(m)))
				abort(); /* the codec does not read back what it wrote */
		}
	}
	free(mad);
	return 0;
}
