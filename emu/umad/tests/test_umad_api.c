/* libibumad.so.3's calls on host ib-a of fixtures/ib.fabric: CA and port data, agents, a MAD
 * answered, a lost one coming back with ETIMEDOUT after its timeout and retries, a buffer too
 * small, an empty file, bad agents. */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/umad/umad_priv.h"

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
	(void)state;
	setenv("RDMAEMU_FABRIC", fixture_path("ib.fabric"), 1);
	setenv("RDMAEMU_NODE", "ib-a", 1);
	return umad_init();
}

static void test_ca(void **state)
{
	char names[4][UMAD_CA_NAME_LEN];
	uint64_t guids[4];
	umad_ca_t ca;
	umad_port_t port;

	(void)state;
	assert_int_equal(umad_get_cas_names(names, 4), 1);
	assert_string_equal(names[0], "mlx5_0");
	assert_int_equal(umad_get_ca(NULL, &ca), 0);
	assert_string_equal(ca.ca_name, "mlx5_0");
	assert_int_equal(ca.node_type, 1);
	assert_int_equal(ca.numports, 1);
	assert_true(be64toh(ca.node_guid) == 0x0002c90300000a00ull);
	assert_non_null(ca.ports[1]);
	assert_int_equal(ca.ports[1]->base_lid, 2);
	assert_int_equal(ca.ports[1]->sm_lid, 1);
	assert_int_equal(ca.ports[1]->state, 4);
	assert_int_equal(ca.ports[1]->phys_state, 5);
	assert_int_equal(ca.ports[1]->rate, 40);
	assert_int_equal(be32toh(ca.ports[1]->capmask), 0x00010000);
	assert_true(be64toh(ca.ports[1]->port_guid) == 0x0002c90300000a01ull);
	assert_true(be64toh(ca.ports[1]->gid_prefix) == 0xfe80000000000000ull);
	assert_string_equal(ca.ports[1]->link_layer, "InfiniBand");
	assert_int_equal(ca.ports[1]->pkeys[0], 0xffff);
	assert_int_equal(umad_release_ca(&ca), 0);
	assert_int_equal(umad_get_ca_portguids(NULL, guids, 4), 2);
	assert_true(guids[0] == 0 && be64toh(guids[1]) == 0x0002c90300000a01ull);
	assert_int_equal(umad_get_ca_portguids(NULL, guids, 1), -ENOMEM);
	assert_int_equal(umad_get_port("mlx5_0", 1, &port), 0);
	assert_int_equal(port.base_lid, 2);
	umad_release_port(&port);
	assert_int_equal(umad_get_ca("mlx5_9", &ca), -ENOENT);
	assert_int_equal(umad_open_port("mlx5_0", 2), -EINVAL);
	assert_int_equal(umad_open_port("nodev", 0), -ENODEV);
}

/* A LID-routed NodeInfo Get to `lid`. */
static void *nodeinfo(int lid, uint32_t tid)
{
	void *u = calloc(1, umad_size() + 256);
	uint8_t *m = umad_get_mad(u);

	m[0] = 1;
	m[1] = 0x01;
	m[2] = 1;
	m[3] = 0x01;
	m[8] = 0xde; /* the top half of the TID is the MAD layer's */
	m[12] = (uint8_t)(tid >> 24);
	m[13] = (uint8_t)(tid >> 16);
	m[14] = (uint8_t)(tid >> 8);
	m[15] = (uint8_t)tid;
	m[17] = 0x11;
	umad_set_addr(u, lid, 0, 0, 0);
	return u;
}

static void test_send_recv(void **state)
{
	int fd = umad_open_port(NULL, 0), agent, len;
	void *req = nodeinfo(3, 0x1234), *resp = calloc(1, umad_size() + 256);
	uint8_t *m = umad_get_mad(resp);
	struct pollfd p;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(umad_get_fd(fd), fd);
	agent = umad_register(fd, 0x01, 1, 0, NULL);
	assert_int_equal(agent, 0);
	assert_int_equal(umad_register(fd, 0x03, 2, 1, NULL), 1);
	assert_int_equal(umad_register(fd, 0x80, 1, 0, NULL), -EPERM);

	/* nothing to read: EWOULDBLOCK at once, ETIMEDOUT after a wait */
	len = 256;
	assert_int_equal(umad_recv(fd, resp, &len, 0), -EWOULDBLOCK);
	assert_int_equal(umad_poll(fd, 10), -ETIMEDOUT);

	assert_int_equal(umad_send(fd, agent, req, 256, 100, 2), 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 1);
	/* too small a buffer: the header, ENOSPC, the MAD stays */
	len = 100;
	assert_int_equal(umad_recv(fd, resp, &len, 0), -ENOSPC);
	assert_int_equal(len, 256);
	len = 256;
	assert_int_equal(umad_recv(fd, resp, &len, 1000), agent);
	assert_int_equal(len, 256);
	assert_int_equal(umad_status(resp), 0);
	assert_int_equal(m[3], 0x81);
	assert_int_equal(m[12] << 24 | m[13] << 16 | m[14] << 8 | m[15], 0x1234);
	assert_int_not_equal(m[8], 0xde);
	assert_int_equal(m[64 + 27], 0x01); /* ib-b's PortGUID ...0b01 */
	assert_int_equal(m[64 + 26], 0x0b);
	assert_int_equal(be16toh(umad_get_mad_addr(resp)->lid), 3);
	assert_int_equal(poll(&p, 1, 0), 0);

	/* LID 9 answers nobody: the send comes back after 100 ms x 3 */
	free(req);
	req = nodeinfo(9, 0x99);
	uint64_t t0 = ms_now();

	assert_int_equal(umad_send(fd, agent, req, 256, 100, 2), 0);
	len = 256;
	assert_int_equal(umad_recv(fd, resp, &len, 50), -ETIMEDOUT);
	len = 256;
	assert_int_equal(umad_recv(fd, resp, &len, 1000), agent);
	assert_true(ms_now() - t0 >= 300);
	assert_int_equal(umad_status(resp), ETIMEDOUT);
	assert_int_equal(len, 24);
	assert_int_equal(m[8], 0xde);
	assert_int_equal(m[15], 0x99);

	/* an agent that is not registered */
	assert_int_equal(umad_send(fd, 7, req, 256, 100, 0), -EIO);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_unregister(fd, agent), 0);
	assert_int_equal(umad_unregister(fd, agent), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_close_port(fd), 0);
	free(req);
	free(resp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ca),
		cmocka_unit_test(test_send_recv),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
