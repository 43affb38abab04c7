/* The rdmaemud protocol (docs/daemon.md): messages on a Unix SOCK_SEQPACKET socket, one message
 * per datagram (the kernel keeps their boundaries, so no length prefix), host byte order (both
 * ends are on this machine). Every message starts with struct emu_dmsg; its body follows. */
#ifndef RDMAEMU_EMU_DAEMON_PROTO_H
#define RDMAEMU_EMU_DAEMON_PROTO_H

#include <stdint.h>

#include "emu/wire.h"

#define EMU_DPROTO_MAGIC 0x444d4552u /* "REMD" little-endian */
/* 2: the UCMA_* messages (an rdma_cm file served by the daemon) */
#define EMU_DPROTO_VERSION 2
#define EMU_DPROTO_NAME_MAX 64
#define EMU_DPROTO_PATH_MAX 4096
/* Largest message: a header and the largest frame the wire carries. */
#define EMU_DPROTO_MSG_MAX (sizeof(struct emu_dmsg) + EMU_WIRE_MAX_FRAME)

/* QP numbers of one host are cut into slices, one per process attached to it (slot k has
 * [16 + k * SLICE, 16 + (k + 1) * SLICE - 1]); slot 0 starts where rxe starts, so a host's first
 * process sees the QPNs it would see alone. */
#define EMU_DPROTO_QPN_SLICE 16384u
#define EMU_DPROTO_MAX_SLOTS 64u

enum emu_dmsg_type {
	EMU_DMSG_HELLO = 1,   /* client -> daemon, body emu_dmsg_hello; answered by WELCOME */
	EMU_DMSG_WELCOME = 2, /* daemon -> client, arg = 0 or an errno, body emu_dmsg_welcome */
	EMU_DMSG_FRAME = 3,   /* both ways, arg = topology endpoint of the host port, body: frame */
	EMU_DMSG_STATUS = 4,  /* client -> daemon (no body); the answer's body is text */
	EMU_DMSG_STOP = 5,    /* client -> daemon (no body); answered by STOP, then the daemon exits */
	EMU_DMSG_LOOPBACK = 6, /* client -> daemon, arg = endpoint, body: a frame the HCA sends to
				* itself (never on the wire), for the process of the same host
				* owning its DestQP; arrives there as a FRAME */
	/* An rdma_cm file in the daemon (emu/daemon/ucma_proto.h): one connection per file. */
	EMU_DMSG_UCMA_OPEN = 7,  /* client -> daemon, body emu_dmsg_hello; answered with arg = 0
				  * or an errno, body emu_ducma_opened, the file's eventfd in
				  * SCM_RIGHTS */
	EMU_DMSG_UCMA_WRITE = 8, /* client -> daemon, body emu_ducma_write; answered with arg =
				  * the command's return value, body: the response buffer */
	EMU_DMSG_UCMA_CLOSE = 9, /* client -> daemon (no body); answered, then the daemon closes
				  * the file (kernel ucma_close) and the connection */
};

struct emu_dmsg {
	uint32_t magic;
	uint16_t version;
	uint16_t type; /* enum emu_dmsg_type */
	uint32_t arg;
	uint32_t pad;
};

struct emu_dmsg_hello {
	char node[EMU_DPROTO_NAME_MAX];     /* host name, NUL-terminated */
	char fabric[EMU_DPROTO_PATH_MAX];   /* real path of the fabric file; "" for the built-in */
	int32_t pid;
};

struct emu_dmsg_welcome {
	uint32_t host;              /* index of the host in the fabric */
	uint32_t qpn_min, qpn_max;  /* the QP numbers this process allocates */
};

#endif
