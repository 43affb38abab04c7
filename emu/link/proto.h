/* The rdmaemud protocol (docs/daemon.md): messages on a Unix SOCK_SEQPACKET socket, one message
 * per datagram (the kernel keeps their boundaries, so no length prefix), host byte order (both
 * ends are on this machine). Every message starts with struct emu_dmsg; its body follows. */
#ifndef RDMAEMU_EMU_DAEMON_PROTO_H
#define RDMAEMU_EMU_DAEMON_PROTO_H

#include <stdint.h>

#include "emu/sim/wire.h"

#define EMU_DPROTO_MAGIC 0x444d4552u /* "REMD" little-endian */
/* 2: the UCMA_* messages (an rdma_cm file served by the daemon); 3: the SHM_* messages;
 * 4: device removal (DEVICE_REMOVE / DEVICE_GONE, WELCOME's list of removed devices, the
 * removal generation in the pad of UCMA_WRITE answers), NEIGH_RESOLVE; 5: NEIGH_RESOLVE
 * answers carry the host's neighbour generation, NEIGH_GEN; 6: push
 * files (UCMA_EVENT / UCMA_CONSUMED / UCMA_DROP: no GET_EVENT round trip); 7: posted
 * commands (UCMA_POST / UCMA_POSTED / UCMA_SPARE: CREATE_ID, DESTROY_ID and RESOLVE_ROUTE
 * answered by the client, no round trip; RESOLVE_ADDR on fresh ids, UCMA_VERDICT),
 * UCMA_CONSUMED for several events; 8: UCMA_WRITE sends no response buffer, its answer the
 * bytes the command wrote; 9: UCMA_OPEN's answer also passes a shared page whose first 8 bytes
 * count the messages the daemon has sent on the file's connection since (EMU_DUCMA_SENT_LEN);
 * 10: UCMA_WRITE and UCMA_POST carry the events read since the last UCMA_CONSUMED in arg and
 * pad, as a UCMA_CONSUMED would (no CONSUMED message before a command); 11: the client's
 * messages after UCMA_OPEN go through a ring in the shared page (emu/link/ucma_ring.h),
 * with UCMA_RING on the socket to wake the daemon; 12: the daemon's queued messages on a
 * file's connection go several to a socket message (UCMA_BUNDLE); 13: a host's sandbox hands
 * its netdevs' tap devices to the daemon (TAP_ATTACH); 14: `ip link set` on a host (LINK_SET,
 * LINK_STATE, WELCOME's link state); 15: virtual time across processes (HELLO and WELCOME
 * say the time mode, VT_QUERY / VT_IDLE / VT_ADVANCE), CM_FAULT; 16: PMA */
#define EMU_DPROTO_VERSION 16
#define EMU_DPROTO_NAME_MAX 64

/* Protocol 9: the page passed with UCMA_OPEN's answer (after the eventfd), struct
 * emu_ducma_shared (emu/link/ucma_ring.h). Its first 8 bytes count the messages the daemon
 * has put on the file's connection since it answered, each counted right before its sendmsg
 * or sendmmsg (a queued one when its turn comes). A client that has read as many knows the
 * socket holds nothing (at most one still being sent, which it would not have seen anyway):
 * its drains, a recvmsg ending in EAGAIN, ~12 a connection on cmtime's client and each under
 * the file's lock, are skipped. A client without the page drains as before. Protocol 11
 * adds the command ring. */

#define EMU_DPROTO_PATH_MAX 4096
/* Largest message: a header and the largest frame the wire carries. */
#define EMU_DPROTO_MSG_MAX (sizeof(struct emu_dmsg) + EMU_WIRE_MAX_FRAME)

/* QP numbers of one host are cut into slices, one per process attached to it (slot k has
 * [16 + k * SLICE, 16 + (k + 1) * SLICE - 1]); slot 0 starts where rxe starts, so a host's first
 * process sees the QPNs it would see alone. SLICE is the fabric's `process-qpns`, by default
 * this one. */
#define EMU_DPROTO_QPN_SLICE 16384u
/* Processes one host can hold: as many slices as fit under the 24-bit QP number
 * ((2^24 - 16) / SLICE: 1023 of the default slice, the last one ending at 0xffc00f), and no more
 * than this many (a daemon serves 4,096 connections). */
#define EMU_DPROTO_MAX_SLOTS 4095u
#define EMU_DPROTO_SLOTS(slice) \
	((0x1000000u - 16u) / (slice) < EMU_DPROTO_MAX_SLOTS ? (0x1000000u - 16u) / (slice) \
							       : EMU_DPROTO_MAX_SLOTS)
_Static_assert(16u + EMU_DPROTO_SLOTS(EMU_DPROTO_QPN_SLICE) * EMU_DPROTO_QPN_SLICE - 1u <=
		       0xffffffu, "every slot's QP numbers fit in 24 bits");
/* Slots whose processes are paired by the shared-memory rings (emu/link/link_shm.c): a
 * process past them sends its host's frames through the daemon, as RDMAEMU_SHM=0 does. Each
 * pair of them holds EMU_SHM_PAIR_BYTES and each process two descriptors a peer, so pairing
 * all of a host's processes would grow as n^2 (1,000 processes: ~16 TiB of rings and 2,000
 * descriptors each, past the default RLIMIT_NOFILE of 1,024). */
#define EMU_DPROTO_SHM_SLOTS 64u
/* The text of a STATUS answer at most: one SEQPACKET message, well under the socket's default
 * send buffer (net.core.wmem_default, 208 KiB). The lines tools and tests wait for come first
 * (the summary, every rdma_cm file, taps, VMs, UDP links); the process lines last, the ones
 * past the end counted on a line of their own. */
#define EMU_DPROTO_STATUS_MAX 65536u
/* Devices a daemon can remove in its lifetime (WELCOME lists them all). */
#define EMU_DPROTO_MAX_REMOVED 32u

enum emu_dmsg_type {
	EMU_DMSG_HELLO = 1,   /* client -> daemon, body emu_dmsg_hello; answered by WELCOME */
	EMU_DMSG_WELCOME = 2, /* daemon -> client, arg = 0 or an errno, body emu_dmsg_welcome */
	EMU_DMSG_FRAME = 3,   /* both ways, arg = topology endpoint of the host port, body: frame */
	EMU_DMSG_STATUS = 4,  /* client -> daemon (no body); the answer's body is text */
	EMU_DMSG_STOP = 5,    /* client -> daemon (no body); answered by STOP, then the daemon exits */
	EMU_DMSG_LOOPBACK = 6, /* client -> daemon, arg = endpoint, body: a frame the HCA sends to
				* itself (never on the wire), for the process of the same host
				* owning its DestQP; arrives there as a FRAME */
	/* An rdma_cm file in the daemon (emu/link/ucma_proto.h): one connection per file. */
	EMU_DMSG_UCMA_OPEN = 7,  /* client -> daemon, body emu_dmsg_hello; answered with arg = 0
				  * or an errno, body emu_ducma_opened, the file's eventfd in
				  * SCM_RIGHTS */
	EMU_DMSG_UCMA_WRITE = 8, /* client -> daemon, body emu_ducma_write, arg and pad as a
				  * UCMA_CONSUMED's (pad 0: none), applied first; answered with
				  * arg = the command's return value, body: the bytes of the
				  * response buffer the command wrote (a prefix) */
	EMU_DMSG_UCMA_CLOSE = 9, /* client -> daemon (no body); answered, then the daemon closes
				  * the file (kernel ucma_close) and the connection */
	/* `rdma link delete DEV` on a host of the daemon's fabric (emu/rdma_cm/devrm_ctl.c): */
	EMU_DMSG_DEVICE_REMOVE = 10, /* client -> daemon, body emu_dmsg_devrm; answered with arg =
				      * 0 or an errno and pad = the removal generation */
	EMU_DMSG_DEVICE_GONE = 11,   /* daemon -> every attached client, arg = host << 16 | device
				      * index, pad = the removal generation it brings: the device
				      * leaves this process's device list */
	EMU_DMSG_NEIGH_RESOLVE = 12, /* client -> daemon, body emu_dmsg_neigh: rdma_resolve_ip in
				      * the daemon's neighbour layer (ib_resolve_eth_dmac for a
				      * verbs AH/QP); answered when it ends, arg = 0 or an errno
				      * (ETIMEDOUT, ENETUNREACH, ...), pad = the host's
				      * neighbour generation the MAC holds for (0 with an
				      * error), body: the 6-byte MAC */
	/* A push file (protocol 6, docs/daemon.md "rdma_cm files"): the daemon sends each
	 * event as it is queued, the client reads it from its own copy of the queue. */
	EMU_DMSG_UCMA_EVENT = 13,    /* daemon -> client, unsolicited, arg = the event's sequence
				      * number on the file (from 1), pad = the removal
				      * generation, body: struct rdma_ucm_event_resp as GET_EVENT
				      * copies it. The file's eventfd got 1 for it. */
	EMU_DMSG_UCMA_CONSUMED = 14, /* client -> daemon, one-way, arg = the sequence number of
				      * the last event it handed to the application, pad = how
				      * many it handed since its last CONSUMED (7: 1 before):
				      * the head of the file's queue (anything else is a
				      * protocol error) */
	EMU_DMSG_UCMA_DROP = 15,     /* daemon -> client, unsolicited, arg = the sequence number
				      * of a pushed event that left the queue unread (destroy,
				      * leave, migrate); the daemon took its 1 off the eventfd.
				      * arg 0: the end of a MIGRATE_ID's drops on its source file */
	/* 16..20: the shared-memory loopback path
	 * between the processes of one host (emu/link/link_shm.c, emu/daemon/shm.c). */
	EMU_DMSG_SHM_HELLO = 16, /* client -> daemon, arg 0, no body, SCM_RIGHTS: the eventfd
				  * that wakes the client's ring reader. Not answered. */
	EMU_DMSG_SHM_PEER = 17,  /* daemon -> client, arg = the peer's slot, body
				  * emu_dmsg_shm_peer, SCM_RIGHTS: the pair's memfd, then the
				  * peer's eventfd */
	EMU_DMSG_SHM_GONE = 18,  /* daemon -> client, arg = the slot of a peer that went away */
	EMU_DMSG_SHM_MAPPED = 19, /* client -> daemon, arg = the slot of a peer whose SHM_PEER it
				   * has acted on (mapped, or given up on) */
	EMU_DMSG_SHM_READY = 20,  /* daemon -> client, arg 0: every process of the host that
				   * was told about this one has acted on it. The client's attach
				   * waits for it, so no loopback frame between the two can be sent
				   * before both ends have their rings (no frame takes the daemon
				   * path first and is overtaken on the rings). */
	EMU_DMSG_NEIGH_GEN = 21, /* daemon -> every client attached to a host, arg = the host,
				  * pad = its new neighbour generation (emu_neigh_gen): MACs
				  * answered by NEIGH_RESOLVE with an older one (in its pad) may
				  * have changed */
	EMU_DMSG_NEIGH_FLUSH = 22, /* client -> daemon, body emu_dmsg_neigh_flush: `ip neigh
				    * flush dev NETDEV` on a host (every netdev when ""); answered
				    * with arg = 0 or an errno (ENOENT: no such host or netdev),
				    * pad = the entries dropped, body: uint32 host, uint32 its
				    * neighbour generation after the flush */
	/* Posted commands (protocol 7, docs/daemon.md "Posted commands"): the client answers
	 * the command itself from what it knows for sure, and the daemon runs it later, in the
	 * connection's order. */
	EMU_DMSG_UCMA_POST = 23,   /* client -> daemon, one-way, body emu_ducma_post and the
				    * command; arg and pad as UCMA_WRITE's */
	EMU_DMSG_UCMA_POSTED = 24, /* daemon -> client, after a UCMA_POST that asked for it
				    * (EMU_DUCMA_POST_ACK), arg = the command's return value,
				    * body emu_ducma_posted */
	EMU_DMSG_UCMA_SPARE = 25,  /* daemon -> client, unsolicited, body: uint32 handles the
				    * daemon reserved for the file's next posted CREATE_IDs */
	EMU_DMSG_UCMA_VERDICT = 26, /* daemon -> client, unsolicited, arg = how many RESOLVE_ADDR
				     * (or RESOLVE_IP) commands the client may post on its fresh
				     * ids (0: none any more, and every answer and verdict kept
				     * goes too), body emu_ducma_verdict */
	EMU_DMSG_UCMA_FORGET = 27,  /* daemon -> client, unsolicited, arg = an id whose state
				     * changed with no event (a request not accepted yet): the
				     * answers and verdicts kept of it go */
	EMU_DMSG_UCMA_RING = 28,    /* client -> daemon, no body, arg 0: the doorbell, a record
				     * waits in the command ring (protocol 11) */
	EMU_DMSG_UCMA_BUNDLE = 29,  /* daemon -> client (protocol 12), arg = n >= 2: the body is
				     * n messages of the file's connection in their order, each
				     * a struct emu_ducma_rec (its type, arg, pad and body length)
				     * and the body, padded to 16 bytes as in the command ring
				     * (emu_ducma_rec_size); EMU_DUCMA_BUNDLE_MAX bytes at most.
				     * Counted once in the shared page's sent count */
	EMU_DMSG_TAP_ATTACH = 30,   /* client -> daemon, body emu_dmsg_tap, SCM_RIGHTS: a tap
				     * device (IFF_TAP | IFF_NO_PI) that stands for a netdev of a
				     * host in its sandbox (emu/host); answered with arg = 0 or an
				     * errno (ENOENT: no such host or netdev, EXDEV: another
				     * fabric, ENODEV: the netdev has no Ethernet port, EBUSY: a
				     * tap serves it already), body emu_dmsg_tap_ans; the
				     * connection hears DEVICE_GONE. The tap carries the kernel's IP
				     * traffic on the host port's wire until the connection closes */
	/* `ip link set NETDEV up|down` on a host of the daemon's fabric (protocol 14): */
	EMU_DMSG_LINK_SET = 31,     /* client -> daemon, body emu_dmsg_link_set; answered when the
				     * daemon's engine has applied it, arg = 0 or an errno
				     * (ENOENT: no such host or netdev), pad = the link generation
				     * of the change (0: nothing changed) */
	EMU_DMSG_LINK_STATE = 32,   /* daemon -> every client attached to the host, arg = netdev
				     * index << 1 | up, pad = the link generation of the change:
				     * the RoCE port of that netdev is ACTIVE (up) or DOWN */
	/* Virtual time across processes (protocol 15, docs/daemon.md "Virtual time"): the
	 * daemon is the time authority of a fabric it runs with --virtual-time. On the main
	 * link socket, in order with its frames. */
	EMU_DMSG_VT_QUERY = 33,	  /* daemon -> client, arg = the round: answer VT_IDLE once idle */
	EMU_DMSG_VT_IDLE = 34,	  /* client -> daemon, arg = the round, body emu_dmsg_vt: the
				   * process's next deadline (UINT64_MAX: none) and the messages
				   * it has sent to the daemon on all its connections (VT_IDLE
				   * itself not counted) */
	EMU_DMSG_VT_ADVANCE = 35, /* daemon -> client, body emu_dmsg_vt (t): the clock moves to t */
	EMU_DMSG_CM_FAULT = 36,	  /* client -> daemon, body emu_dmsg_cm_fault:
				   * rdmaemu_ctl_cm_fault on the daemon's CM agents (theirs are the
				   * fabric's); answered with arg = 0 or an errno, body: the old
				   * rule (emu_dmsg_cm_rule) */
	EMU_DMSG_PMA = 37,	  /* client -> daemon (protocol 16), body emu_dmsg_pma, on a
				   * control connection: the PMA of the node owning the LID
				   * answers from the port counters of the daemon's wire
				   * (emu/ib/pma.h); answered with arg = 0 and the 256-byte
				   * answer, or arg = an errno (ETIMEDOUT: no answer) */
};

struct emu_dmsg_pma {
	uint32_t dlid; /* the LID the MAD is for */
	uint32_t pad;
	uint8_t mad[256];
};

/* HELLO's and WELCOME's flags */
#define EMU_DPROTO_VIRTUAL_TIME 1u /* the client wants, the daemon runs, virtual time */

struct emu_dmsg_vt {
	uint64_t t;	/* VT_IDLE: the next deadline; VT_ADVANCE: the instant */
	uint64_t sent;	/* VT_IDLE: messages sent to the daemon so far */
};

struct emu_dmsg_cm_rule {
	uint32_t drop_next, dup_next, delay_next;
	uint32_t pad;
	double drop, dup, delay;
	uint64_t delay_ns;
};

struct emu_dmsg_cm_fault {
	char node[EMU_DPROTO_NAME_MAX];	  /* host name */
	char device[EMU_DPROTO_NAME_MAX]; /* "": every device */
	char msg[16];
	uint32_t set;			  /* 0: only read the rule */
	uint32_t pad;
	struct emu_dmsg_cm_rule rule;
};

struct emu_dmsg_tap {
	char node[EMU_DPROTO_NAME_MAX];
	char netdev[EMU_DPROTO_NAME_MAX];
	char fabric[EMU_DPROTO_PATH_MAX]; /* real path of the fabric file; "" for the built-in */
};

/* TAP_ATTACH's answer body: the devices removed so far, as in WELCOME; the connection hears
 * DEVICE_GONE for later ones, as an attached process does. */
struct emu_dmsg_tap_ans {
	uint32_t devrm_gen;
	struct {
		uint16_t host, dev;
	} removed[EMU_DPROTO_MAX_REMOVED];
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
	uint32_t flags;                     /* EMU_DPROTO_VIRTUAL_TIME */
	uint64_t sent;                      /* HELLO: the messages this process has sent to the
					     * daemon, this one included (an exec'd process
					     * starts its count again) */
};

struct emu_dmsg_welcome {
	uint32_t host;              /* index of the host in the fabric */
	uint32_t qpn_min, qpn_max;  /* the QP numbers this process allocates */
	uint32_t devrm_gen;         /* devices removed so far (the removal generation) */
	struct {
		uint16_t host, dev;
	} removed[EMU_DPROTO_MAX_REMOVED]; /* the first devrm_gen entries: which */
	uint32_t link_gen;          /* link changes (LINK_SET) made so far in the fabric */
	uint32_t link_pad;
	uint64_t netdevs_down;      /* bit i: netdev i of this host is down now (i < 64) */
	uint32_t flags;             /* the daemon's mode (EMU_DPROTO_VIRTUAL_TIME), refusals too */
	uint32_t qpn_first;         /* where the QP pool starts (the host's QPNs go on; 0: qpn_min) */
	uint64_t now;               /* virtual time: the daemon's clock */
};

struct emu_dmsg_neigh {
	uint32_t host;       /* index of the host in the fabric */
	uint32_t timeout_ms;
	uint8_t src[128];    /* struct sockaddr_storage: the source GID's address */
	uint8_t dst[128];    /* the destination GID's address */
};

struct emu_dmsg_devrm {
	char node[EMU_DPROTO_NAME_MAX]; /* host name, NUL-terminated */
	char dev[EMU_DPROTO_NAME_MAX];  /* RDMA device name, NUL-terminated */
};

struct emu_dmsg_link_set {
	char node[EMU_DPROTO_NAME_MAX];	  /* host name, NUL-terminated */
	char netdev[EMU_DPROTO_NAME_MAX]; /* netdev name, NUL-terminated */
	uint32_t up;			  /* 1: up, 0: down */
};

struct emu_dmsg_neigh_flush {
	char node[EMU_DPROTO_NAME_MAX];	  /* host name, NUL-terminated */
	char netdev[EMU_DPROTO_NAME_MAX]; /* netdev name, "" for all of the host's */
};

/* A pair of processes of one host shares one memfd (created by the daemon, zero-filled) holding
 * two single-producer rings: ring k (at k * EMU_SHM_RING_SPAN) is written by the process told
 * tx_ring = k and read by the other. Each ring: a 4 KiB header, then EMU_SHM_RING_DATA bytes
 * of records (emu/link/link_shm.c). Pages are touched only as the rings fill. */
#define EMU_SHM_RING_HDR 4096u
#define EMU_SHM_RING_DATA (16u << 20)
#define EMU_SHM_RING_SPAN (EMU_SHM_RING_HDR + EMU_SHM_RING_DATA)
#define EMU_SHM_PAIR_BYTES (2u * EMU_SHM_RING_SPAN)

struct emu_dmsg_shm_peer {
	uint32_t qpn_min, qpn_max; /* the peer's slice: loopback frames for these DestQPs */
	int32_t pid;
	uint32_t tx_ring; /* 0 or 1: the ring of the pair this process writes */
};

#endif
