/* The MACs a process under rdmaemud keeps for its verbs AHs (emu/link/link.c, docs/daemon.md
 * "Frames"): run as a process of host A of fixtures/rxe-ref2.fabric, with
 * RDMAEMU_TRACE=neighlink, it creates an AH towards B (192.0.2.66) three times, flushing
 * A's neighbour table in the daemon (`ip neigh flush`, rdmaemu_ctl_neigh_flush) before the
 * third: the first is asked of the daemon, the second kept, the third asked again (the
 * flush moved A's neighbour generation; the flush returns with this process knowing it).
 * Prints one line per step; test_daemon_ahmac.sh checks them and the trace. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "rdmaemu/ctl.h"

static void ah(struct ibv_pd *pd, const char *label)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = { .raw = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 66 } },
			 .sgid_index = 1,
			 .hop_limit = 1 },
	};
	struct ibv_ah *h;

	errno = 0;
	h = ibv_create_ah(pd, &a);
	printf("create_ah B %s -> %s errno=%d\n", label, h ? "OK" : "NULL", h ? 0 : errno);
	if (h)
		ibv_destroy_ah(h);
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	int n;

	if (!pd) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* in step with the trace on stderr */
	ah(pd, "first");
	ah(pd, "second");
	n = rdmaemu_ctl_neigh_flush("A", NULL);
	printf("neigh flush A -> %d errno=%d\n", n, n < 0 ? errno : 0);
	n = rdmaemu_ctl_neigh_flush("nosuchhost", NULL);
	printf("neigh flush nosuchhost -> %d errno=%d\n", n, n < 0 ? errno : 0);
	ah(pd, "after the flush");
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
