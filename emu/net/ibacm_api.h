/* The emulated host's ibacm as librdmacm reaches it.
 *
 * rdma-core's librdmacm asks ibacm over a socket (/run/ibacm.sock, /run/ibacm.port) with the
 * messages of ibacm's acm.h: a RESOLVE request of SOURCE / DEST / PATH entries, one reply.
 * The emulated ibacm (emu/net/ibacm.c) runs in the emulator on the hosts whose fabric line says
 * `acm on`, and answers the same messages; lib/ (librdmacm.so.1) sends them through
 * emu_ibacm_exchange() instead of a socket, so that the library speaks one protocol to every
 * ibacm, the emulated host's and one named by RDMAEMU_IBACM_* (lib/acm_sock.c). This header is
 * the whole boundary: the layouts below and that one call.
 *
 * Layouts: acm.h's, header in host byte order as librdmacm sends it. */
#ifndef RDMAEMU_EMU_IBACM_API_H
#define RDMAEMU_EMU_IBACM_API_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/sa.h>

#define EMU_IBACM_VERSION 1
#define EMU_IBACM_OP_RESOLVE 0x01
#define EMU_IBACM_OP_ACK 0x80
#define EMU_IBACM_HDR_LEN 16
#define EMU_IBACM_EP_LEN 72
#define EMU_IBACM_MAX_EPS 8

/* entry flags */
#define EMU_IBACM_EP_FLAG_SOURCE (1u << 0)
#define EMU_IBACM_EP_FLAG_DEST (1u << 1)
#define EMU_IBACM_FLAGS_NODELAY (1u << 30)

/* entry types */
#define EMU_IBACM_EP_INFO_ADDRESS_IP 0x0002
#define EMU_IBACM_EP_INFO_ADDRESS_IP6 0x0003
#define EMU_IBACM_EP_INFO_PATH 0x0010

/* reply status (acm.h ACM_STATUS_*; librdmacm takes any other than SUCCESS as "not
 * resolved" and ignores the whole reply) */
#define EMU_IBACM_STATUS_SUCCESS 0
#define EMU_IBACM_STATUS_EINVAL 2
#define EMU_IBACM_STATUS_ENODATA 3
#define EMU_IBACM_STATUS_ETIMEDOUT 6
#define EMU_IBACM_STATUS_EDESTADDR 9

struct emu_ibacm_hdr {
	uint8_t version;
	uint8_t opcode;
	uint8_t status;
	uint8_t data[3];
	uint16_t length; /* of the whole message */
	uint64_t tid;
};

/* acm_ep_addr_data. A PATH entry is an ibv_path_data once its type is cleared (the flags are
 * the path's IBV_PATH_FLAG_*). */
struct emu_ibacm_ep {
	uint32_t flags;
	uint16_t type;
	uint16_t reserved;
	union {
		uint8_t addr[64];
		struct ibv_path_record path;
	} info;
};

struct emu_ibacm_msg {
	struct emu_ibacm_hdr hdr;
	struct emu_ibacm_ep ep[EMU_IBACM_MAX_EPS];
};

_Static_assert(sizeof(struct emu_ibacm_hdr) == EMU_IBACM_HDR_LEN, "acm_hdr is 16 bytes");
_Static_assert(sizeof(struct emu_ibacm_ep) == EMU_IBACM_EP_LEN, "acm_ep_addr_data is 72 bytes");

/* One exchange with the ibacm of the host this process is attached to, as librdmacm's send()
 * of the request (len bytes, a whole message) and recv() of the reply (at most size bytes
 * into reply, which may be the request's buffer). Returns the reply's length, or -errno as
 * connecting to the socket would fail: ECONNREFUSED when no ibacm runs on the host, ENODEV
 * when the process has no host. The reply's status says whether ibacm resolved the request;
 * on InfiniBand the answer may take a PathRecord query on the virtual clock. With len 0 only
 * the connection is tried (librdmacm's ucma_ib_init): 0, or the same -errno. */
ssize_t emu_ibacm_exchange(const void *req, size_t len, void *reply, size_t size);

#endif
