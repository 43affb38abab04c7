/* `ip link set` under rdmaemud (docs/daemon.md "Link state"): a process of host B of
 * fixtures/rxe-ref2.fabric reads its rxe0 port as ibv_query_port shows it, and changes B's
 * eth0 with rdmaemu_ctl_link_set, which the daemon's engine applies. One line per step;
 * test_daemon_linkset.sh checks them.
 *   link_set query           the port's state and physical state
 *   link_set down | up       rdmaemu_ctl_link_set(NULL, "eth0", ...), then the port; and a
 *                            netdev B does not have (ENOENT)
 *   link_set watch           the port now, "ready", then the port once it changes (5 s) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "rdmaemu/ctl.h"

static struct ibv_port_attr port(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	memset(&pa, 0, sizeof(pa));
	if (ibv_query_port(ctx, 1, &pa))
		printf("query_port failed errno=%d\n", errno);
	return pa;
}

static void show(struct ibv_context *ctx)
{
	struct ibv_port_attr pa = port(ctx);

	printf("port 1 state %d (%s) phys_state %u\n", pa.state, ibv_port_state_str(pa.state),
	       pa.phys_state);
}

static int watch(struct ibv_context *ctx)
{
	struct ibv_port_attr was = port(ctx);

	show(ctx);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < 5000; i++) {
		struct timespec ms = { 0, 1000000 };

		if (port(ctx).state != was.state) {
			show(ctx);
			return 0;
		}
		nanosleep(&ms, NULL);
	}
	printf("no change within 5 s\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || !ctx) {
		fprintf(stderr, "usage: link_set query|down|up|watch (as a process of host B)\n");
		return 2;
	}
	if (!strcmp(argv[1], "watch"))
		return watch(ctx);
	if (!strcmp(argv[1], "down") || !strcmp(argv[1], "up")) {
		errno = 0;
		n = rdmaemu_ctl_link_set(NULL, "eth0", argv[1][0] == 'u');
		printf("link_set eth0 %s -> %d errno=%d\n", argv[1], n, n ? errno : 0);
		errno = 0;
		n = rdmaemu_ctl_link_set("B", "eth9", 0);
		printf("link_set eth9 down -> %d errno=%d\n", n, n ? errno : 0);
	}
	show(ctx);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
