/* PORT (spec §15 rows 255-259): rdma_get_src_port / rdma_get_dst_port and the inline
 * rdma_get_local_addr / rdma_get_peer_addr.
 *
 * These need an rdma_cm_id but read only id->route.addr, so a zero-filled dummy id with the
 * addresses filled in is valid input (§15 legend) and no device is needed. */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>
#include <string.h>

#include "conformance/conformance.h"
#include "rdmaemu/compat.h"

static void set_addr(struct sockaddr_storage *dst, const char *spec)
{
	if (!conf_parse_sockaddr(spec, dst))
		conf_fatal("bad spec %s", spec);
}

static void port_255(const struct conf_case *c)
{
	struct rdma_cm_id id;
	uint16_t got;

	memset(&id, 0, sizeof id);
	set_addr(&id.route.addr.src_storage, "127.0.0.1:7471");
	conf_stimulus("rdma_get_src_port(id with src 127.0.0.1:7471)");
	got = rdma_get_src_port(&id);
	EXPECT_HEX("port", got, htons(7471));
	conf_note("0x%04x (network byte order)", got);
}

static void port_256(const struct conf_case *c)
{
	struct rdma_cm_id id;
	uint16_t got;

	memset(&id, 0, sizeof id);
	set_addr(&id.route.addr.dst_storage, "[::1]:9999");
	conf_stimulus("rdma_get_dst_port(id with dst [::1]:9999)");
	got = rdma_get_dst_port(&id);
	EXPECT_HEX("port", got, htons(9999));
	conf_note("0x%04x", got);
}

static void port_257(const struct conf_case *c)
{
	struct rdma_cm_id id;
	uint16_t got;

	memset(&id, 0, sizeof id);
	set_addr(&id.route.addr.src_storage,
		 "ib:[fe80::2:c903:a:b] pkey=0xffff sid=0x0000000001061d2f mask=0xffffffffffffffff");
	conf_stimulus("rdma_get_src_port(id with AF_IB src, sid 0x1061d2f)");
	got = rdma_get_src_port(&id);
	EXPECT_HEX("port", got, htons(0x1d2f));
	conf_note("0x%04x", got);
}

static void port_258(const struct conf_case *c)
{
	struct rdma_cm_id id;
	uint16_t s, d;

	memset(&id, 0, sizeof id);
	conf_stimulus("rdma_get_src_port/rdma_get_dst_port(id with zeroed route.addr)");
	s = rdma_get_src_port(&id);
	d = rdma_get_dst_port(&id);
	EXPECT_INT("src port", s, 0);
	EXPECT_INT("dst port", d, 0);
	conf_note("%u and %u", s, d);
}

static void port_259(const struct conf_case *c)
{
	struct rdma_cm_id id;

	memset(&id, 0, sizeof id);
	conf_stimulus("rdma_get_local_addr(id), rdma_get_peer_addr(id)");
	conf_expect(rdma_get_local_addr(&id) == &id.route.addr.src_addr,
		    "rdma_get_local_addr != &id->route.addr.src_addr");
	conf_expect(rdma_get_peer_addr(&id) == &id.route.addr.dst_addr,
		    "rdma_get_peer_addr != &id->route.addr.dst_addr");
	conf_note("&id->route.addr.src_addr / &id->route.addr.dst_addr");
}

#define BYTE_ORDER_DOC "seeds: 'returns the 16-bit port number' (byte order unstated); the value " \
	"is in network byte order (0x2f1d for 7471 on x86)"

static const struct conf_case cases[] = {
	{ "PORT-255", "PORT", 255, "rdma_get_src_port with src 127.0.0.1:7471 = htons(7471)",
	  BYTE_ORDER_DOC, PRE_NONE, NULL, 0, port_255, NULL },
	{ "PORT-256", "PORT", 256, "rdma_get_dst_port with AF_INET6 port 9999 = htons(9999)",
	  BYTE_ORDER_DOC, PRE_NONE, NULL, 0, port_256, NULL },
	{ "PORT-257", "PORT", 257, "AF_IB src with sid 0x...01061d2f: port htons(0x1d2f)", NULL,
	  PRE_NONE, NULL, 0, port_257, NULL },
	{ "PORT-258", "PORT", 258, "zeroed route.addr: 0 and 0", NULL, PRE_NONE, NULL, 0, port_258,
	  NULL },
	{ "PORT-259", "PORT", 259, "rdma_get_local_addr/rdma_get_peer_addr return "
	  "&id->route.addr.src_addr / dst_addr (inline, not symbols)", NULL, PRE_NONE, NULL, 0,
	  port_259, NULL },
};

const struct conf_area conf_area_port = { "PORT", cases, sizeof cases / sizeof cases[0] };
