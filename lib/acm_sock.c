/* ibacm over its socket: the acm.h protocol as librdmacm speaks it (spec §4.5, rdma-core's
 * librdmacm/acm.c, v44).
 *
 * The emulated host's own ibacm (fabric file: `acm on`) is answered inside the library
 * (lib/acm.c). A test, or a user who runs a real or fake ibacm for the emulated process,
 * names a server instead:
 *   RDMAEMU_IBACM_PORT_FILE   a file holding a TCP port: connect to 127.0.0.1:port
 *                             (the real library's /run/ibacm.port);
 *   RDMAEMU_IBACM_SERVER_PATH an AF_UNIX stream socket, used when the port file gives no port
 *                             (the real library's /run/ibacm.sock).
 * When either is set, every active lookup goes to that server exactly as rdma-core sends it,
 * and the fabric's own ibacm is not consulted. The emulator never reads /run/ibacm.*: a real
 * ibacm on the machine serves the real fabric, not the emulated one.
 *
 * The connection is made once per process, on the first active lookup, and any failure
 * leaves it closed for good (ucma_ib_init): later lookups behave as without ibacm. Requests
 * are serialised on one mutex; one send, one recv. A reply counts only when the recv length
 * is at least the 16-byte header, equals the header's length and the status is 0; anything
 * else is ignored silently, as the real library does. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "lib/cma.h"
#include "lib/gai.h"

/* acm.h: header and endpoint layouts (the header in host byte order, as librdmacm sends it) */
#define ACM_VERSION 1
#define ACM_OP_RESOLVE 0x01
#define ACM_HDR_LEN 16
#define ACM_EP_LEN 72
#define ACM_MAX_EPS 8
#define ACM_EP_FLAG_SOURCE (1u << 0)
#define ACM_EP_FLAG_DEST (1u << 1)
#define ACM_FLAGS_NODELAY (1u << 30)
#define ACM_EP_INFO_ADDRESS_IP 0x0002
#define ACM_EP_INFO_ADDRESS_IP6 0x0003
#define ACM_EP_INFO_PATH 0x0010

struct acm_wire_hdr {
	uint8_t version;
	uint8_t opcode;
	uint8_t status;
	uint8_t data[3];
	uint16_t length;
	uint64_t tid;
};

struct acm_wire_ep {
	uint32_t flags;
	uint16_t type;
	uint16_t reserved;
	union {
		uint8_t addr[64];
		struct ibv_path_record path;
	} info;
};

struct acm_wire_msg {
	struct acm_wire_hdr hdr;
	struct acm_wire_ep ep[ACM_MAX_EPS];
};

_Static_assert(sizeof(struct acm_wire_hdr) == ACM_HDR_LEN, "acm_hdr is 16 bytes");
_Static_assert(sizeof(struct acm_wire_ep) == ACM_EP_LEN, "acm_ep_addr_data is 72 bytes");
_Static_assert(sizeof(struct ibv_path_data) == ACM_EP_LEN, "a PATH entry is an ibv_path_data");

static pthread_mutex_t acm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool acm_inited, acm_configured;
static int acm_fd = -1;

/* ucma_set_server_port: a port number the file starts with, else 0. */
static uint16_t port_from_file(const char *path)
{
	unsigned port = 0;
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "re")))
		return 0;
	if (fscanf(f, "%u", &port) != 1 || port > 0xffff)
		port = 0;
	fclose(f);
	return (uint16_t)port;
}

static int connect_tcp(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	if (fd < 0)
		return -1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sun.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ucma_ib_init, once per process. */
static void acm_sock_init(void)
{
	const char *port_file, *server_path;
	uint16_t port;

	pthread_mutex_lock(&acm_lock);
	if (acm_inited)
		goto out;
	port_file = getenv("RDMAEMU_IBACM_PORT_FILE");
	server_path = getenv("RDMAEMU_IBACM_SERVER_PATH");
	acm_configured = (port_file && *port_file) || (server_path && *server_path);
	if (acm_configured) {
		port = port_from_file(port_file);
		acm_fd = port ? connect_tcp(port) : connect_unix(server_path);
	}
	acm_inited = true;
out:
	pthread_mutex_unlock(&acm_lock);
}

static bool inet_addr_of(const struct sockaddr *sa, socklen_t len)
{
	return len && sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
}

static bool ib_addr_of(const struct sockaddr *sa, socklen_t len)
{
	return len && sa && sa->sa_family == AF_IB;
}

static void set_ep_addr(struct acm_wire_ep *ep, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		ep->type = ACM_EP_INFO_ADDRESS_IP;
		memcpy(ep->info.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		ep->type = ACM_EP_INFO_ADDRESS_IP6;
		memcpy(ep->info.addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

/* The request: SOURCE (a source address is known), DEST (NODELAY for numeric or no-route
 * lookups), and a PATH entry when the hints carry a route or an address is AF_IB. */
static void build_request(struct acm_wire_msg *m, const struct rdma_addrinfo *rai,
			  const struct rdma_addrinfo *hints)
{
	struct acm_wire_ep *ep = m->ep;

	memset(m, 0, sizeof(*m));
	m->hdr.version = ACM_VERSION;
	m->hdr.opcode = ACM_OP_RESOLVE;
	m->hdr.length = ACM_HDR_LEN;
	if (inet_addr_of(rai->ai_src_addr, rai->ai_src_len)) {
		ep->flags = ACM_EP_FLAG_SOURCE;
		set_ep_addr(ep++, rai->ai_src_addr);
		m->hdr.length += ACM_EP_LEN;
	}
	if (inet_addr_of(rai->ai_dst_addr, rai->ai_dst_len)) {
		ep->flags = ACM_EP_FLAG_DEST;
		if (hints->ai_flags & (RAI_NUMERICHOST | RAI_NOROUTE))
			ep->flags |= ACM_FLAGS_NODELAY;
		set_ep_addr(ep++, rai->ai_dst_addr);
		m->hdr.length += ACM_EP_LEN;
	}
	if (hints->ai_route_len || ib_addr_of(rai->ai_src_addr, rai->ai_src_len) ||
	    ib_addr_of(rai->ai_dst_addr, rai->ai_dst_len)) {
		/* only a route of exactly one record or one path_data is passed on */
		if (hints->ai_route_len == sizeof(struct ibv_path_record))
			memcpy(&ep->info.path, hints->ai_route, sizeof(struct ibv_path_record));
		else if (hints->ai_route_len == sizeof(struct ibv_path_data))
			memcpy(&ep->info.path, &((const struct ibv_path_data *)hints->ai_route)->path,
			       sizeof(struct ibv_path_record));
		if (ib_addr_of(rai->ai_src_addr, rai->ai_src_len))
			memcpy(&ep->info.path.sgid,
			       &((const struct sockaddr_ib *)rai->ai_src_addr)->sib_addr, 16);
		if (ib_addr_of(rai->ai_dst_addr, rai->ai_dst_len))
			memcpy(&ep->info.path.dgid,
			       &((const struct sockaddr_ib *)rai->ai_dst_addr)->sib_addr, 16);
		ep->type = ACM_EP_INFO_PATH;
		m->hdr.length += ACM_EP_LEN;
	}
}

static void save_source(struct rdma_addrinfo *rai, const struct acm_wire_ep *ep)
{
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;

	if (!(ep->flags & ACM_EP_FLAG_SOURCE) || rai->ai_src_len)
		return;
	if (ep->type == ACM_EP_INFO_ADDRESS_IP) {
		if (!(sin = calloc(1, sizeof(*sin))))
			return;
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, ep->info.addr, 4);
		rai->ai_src_addr = (struct sockaddr *)sin;
		rai->ai_src_len = sizeof(*sin);
	} else {
		if (!(sin6 = calloc(1, sizeof(*sin6))))
			return;
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, ep->info.addr, 16);
		rai->ai_src_addr = (struct sockaddr *)sin6;
		rai->ai_src_len = sizeof(*sin6);
	}
}

/* ucma_ib_save_resp. Faithful to rdma-core, including two quirks a test can see: the route is
 * the run of path_cnt entries starting at the FIRST path entry (entries in between that are
 * not paths are copied too, their type left as is), and a reply without any path still
 * allocates ai_route (calloc of zero bytes: a non-NULL pointer with ai_route_len 0). */
static void save_reply(struct rdma_addrinfo *rai, struct acm_wire_msg *m)
{
	struct acm_wire_ep *first = NULL;
	size_t cnt = (m->hdr.length - ACM_HDR_LEN) / ACM_EP_LEN, paths = 0;

	for (size_t i = 0; i < cnt; i++) {
		struct acm_wire_ep *ep = &m->ep[i];

		switch (ep->type) {
		case ACM_EP_INFO_PATH:
			ep->type = 0; /* becomes ibv_path_data.reserved */
			if (!first)
				first = ep;
			paths++;
			break;
		case ACM_EP_INFO_ADDRESS_IP:
		case ACM_EP_INFO_ADDRESS_IP6:
			save_source(rai, ep);
			break;
		default:
			break;
		}
	}
	rai->ai_route = calloc(paths ? paths : 1, sizeof(struct ibv_path_data));
	if (rai->ai_route) {
		if (paths)
			memcpy(rai->ai_route, first, paths * sizeof(struct ibv_path_data));
		rai->ai_route_len = paths * sizeof(struct ibv_path_data);
	}
}

bool cma_acm_sock_resolve(struct rdma_addrinfo **raip, const struct rdma_addrinfo *hints)
{
	struct acm_wire_msg m;
	ssize_t n;

	acm_sock_init();
	if (!acm_configured)
		return false;
	if (acm_fd < 0)
		return true; /* a named server that could not be reached: as without ibacm */

	build_request(&m, *raip, hints);
	pthread_mutex_lock(&acm_lock);
	/* MSG_NOSIGNAL: rdma-core sends with flags 0 and dies of SIGPIPE when ibacm has gone away
	 * since the connection was made; here the lookup just goes on without ibacm. */
	n = send(acm_fd, &m, m.hdr.length, MSG_NOSIGNAL);
	if (n != (ssize_t)m.hdr.length) {
		pthread_mutex_unlock(&acm_lock);
		return true;
	}
	n = recv(acm_fd, &m, sizeof(m), 0);
	pthread_mutex_unlock(&acm_lock);
	if (n < ACM_HDR_LEN || n != (ssize_t)m.hdr.length || m.hdr.status)
		return true;
	save_reply(*raip, &m);
	if (cma_af_ib_support() && !(hints->ai_flags & RAI_ROUTEONLY) && (*raip)->ai_route_len)
		cma_resolve_af_ib(raip);
	return true;
}
