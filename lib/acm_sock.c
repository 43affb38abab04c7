/* ibacm over its socket: the connection librdmacm makes to ibacm (spec §4.5, rdma-core's
 * librdmacm/acm.c, v44); the messages are lib/acm.c's.
 *
 * The emulated host's own ibacm (fabric file: `acm on`) runs in the emulator
 * (emu/net/ibacm_api.h). A test, or a user who runs a real or fake ibacm for the emulated
 * process, names a server instead:
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
 * are serialised on one mutex; one send, one recv. */
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
#include "util/failcall.h"
#include "util/failnth.h"

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

/* A socket that cannot be had leaves the process without ibacm for good, as rdma-core's
 * ucma_ib_init() sets init with sock -1; its lookups go on without it. */
#define LOST_ACM "ibacm (the process resolves without it from now on)"

static int connect_tcp(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = emu_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	if (fd < 0) {
		emu_fail_lost(LOST_ACM);
		return -1;
	}
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
	fd = emu_socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		emu_fail_lost(LOST_ACM);
		return -1;
	}
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

bool cma_acm_sock_named(void)
{
	acm_sock_init();
	return acm_configured;
}

ssize_t cma_acm_sock_exchange(void *msg, size_t len, size_t size)
{
	ssize_t n;

	if (acm_fd < 0)
		return -1; /* a named server that could not be reached: as without ibacm */

	pthread_mutex_lock(&acm_lock);
	/* MSG_NOSIGNAL: rdma-core sends with flags 0 and dies of SIGPIPE when ibacm has gone away
	 * since the connection was made; here the lookup just goes on without ibacm. */
	n = send(acm_fd, msg, len, MSG_NOSIGNAL);
	if (n != (ssize_t)len) {
		pthread_mutex_unlock(&acm_lock);
		return -1;
	}
	n = recv(acm_fd, msg, size, 0);
	pthread_mutex_unlock(&acm_lock);
	return n;
}
