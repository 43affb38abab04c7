/* Fuzz target: the emulated host's ibacm (emu/net/ibacm.c): the acm.h messages librdmacm
 * sends it, as from any program of a host with `acm on` (ib-c of fixtures/ib.fabric). Input:
 * two bytes of reply buffer size (little endian, at most 1024), then the request. The
 * request and the reply buffer are allocated to their exact sizes so that AddressSanitizer
 * sees a read or write past either. The reply must fit the buffer and, when it is a whole
 * header, say its own length. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/net/ibacm_api.h"
#include "emu/sim/engine.h"
#include "fuzz/fuzz_env.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	if (fuzz_attach("ib.fabric", "ib-c"))
		abort();
	emu_engine_lock(emu_engine_get());
	emu_engine_set_quiesce_ns(emu_engine_get(), 0);
	emu_engine_unlock(emu_engine_get());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	size_t rsize = fuzz_u16(&in) % 1025, len;
	const uint8_t *body = fuzz_take(&in, in.n, &len);
	uint8_t *req = malloc(len ? len : 1), *reply = malloc(rsize ? rsize : 1);
	struct emu_ibacm_hdr h;
	ssize_t n;

	if (!req || !reply)
		abort();
	memcpy(req, body, len);
	n = emu_ibacm_exchange(req, len, reply, rsize);
	if (n > (ssize_t)rsize)
		abort(); /* more than the buffer holds */
	if (n >= (ssize_t)sizeof(h)) {
		memcpy(&h, reply, sizeof(h));
		if (h.length > sizeof(struct emu_ibacm_msg) || h.length < sizeof(h) ||
		    (size_t)n != (h.length < rsize ? h.length : rsize))
			abort(); /* a reply that does not say its own length */
	}
	free(req);
	free(reply);
	return 0;
}
