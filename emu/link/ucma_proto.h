/* The rdma_cm file across the daemon socket (docs/daemon.md, "rdma_cm files"): the bodies of
 * the UCMA_* messages of emu/link/proto.h and the table of the user-space pointers the
 * commands carry.
 *
 * The kernel's ucma commands are byte buffers, except that some carry the address of a user
 * buffer: the response (copy_to_user) or, for SET_OPTION, the option's value (copy_from_user).
 * The daemon cannot reach into the client's memory, so the client sends those buffers' bytes
 * along with the command, the daemon points the command at its own copies, runs it, and sends
 * the response buffer back, which the client copies to the address the command named. The
 * response buffer goes both ways, with what the caller had in it: bytes the command does not
 * write come back unchanged, as they would stay in the caller's memory.
 *
 * Include <rdma/rdma_user_cm.h> before this header. */
#ifndef RDMAEMU_EMU_DAEMON_UCMA_PROTO_H
#define RDMAEMU_EMU_DAEMON_UCMA_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "emu/rdma_cm/ucma_api.h"

/* Limits of one UCMA_WRITE (the daemon reads a message into a 5 KiB buffer). The largest
 * command (CONNECT, JOIN_MCAST) is under 400 bytes; responses larger than the largest answer
 * (QUERY IB_SERVICE with 11 records, PATH with 6) are cut to MAX_OUT, which only limits how
 * many records come back. */
#define EMU_DUCMA_MAX_IN 1024u
#define EMU_DUCMA_MAX_OUT 2048u
#define EMU_DUCMA_MAX_OPT 1024u

/* Answers a push file's UCMA_EVENT carries after the event (protocol 6): the QUERY and
 * INIT_QP_ATTR answers librdmacm asks for right after reading such an event (ADDR_RESOLVED:
 * addr, gid; ROUTE_RESOLVED: path; CONNECT_REQUEST: addr, gid, path of the new id and its
 * INIT/RTR/RTS attributes; CONNECT_RESPONSE: INIT/RTR/RTS), run by the daemon when it queued
 * the event. Each is this header, then len bytes padded to 8: the prefix of the response
 * buffer the command wrote (it succeeded; a failure is not sent). At most
 * EMU_DUCMA_MAX_OUT bytes of them per event. */
struct emu_ducma_snap {
	uint32_t cmd; /* RDMA_USER_CM_CMD_QUERY or RDMA_USER_CM_CMD_INIT_QP_ATTR; or
		       * RDMA_USER_CM_CMD_RESOLVE_ROUTE with len 0, a verdict: that command, with
		       * a timeout, returns 0 on this id now (the client may post it) */
	uint32_t id;  /* the command's id */
	uint32_t sub; /* its option (QUERY) or qp_state (INIT_QP_ATTR) */
	uint32_t len; /* the bytes of the response buffer it wrote */
};

/* A posted command (UCMA_POST): what the client answered, for the daemon to hold it to. */
#define EMU_DUCMA_POST_ACK 1u /* flags: answer with UCMA_POSTED */
struct emu_ducma_post {
	uint32_t in;	/* bytes of the command (with its header) that follow */
	uint32_t flags; /* EMU_DUCMA_POST_* */
	int32_t ret;	/* the return value the client gave (0) */
	uint32_t val;	/* CREATE_ID: the spare handle it gave; DESTROY_ID: the events_reported */
};

/* The struct of a command a client may post (UCMA_POST carries it whole), 0 for the others. */
static inline size_t emu_ducma_post_size(uint32_t cmd)
{
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID:
		return sizeof(struct rdma_ucm_create_id);
	case RDMA_USER_CM_CMD_DESTROY_ID:
		return sizeof(struct rdma_ucm_destroy_id);
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		return sizeof(struct rdma_ucm_resolve_ip);
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		return sizeof(struct rdma_ucm_resolve_addr);
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE:
		return sizeof(struct rdma_ucm_resolve_route);
	case RDMA_USER_CM_CMD_CONNECT:
		return sizeof(struct rdma_ucm_connect);
	case RDMA_USER_CM_CMD_ACCEPT:
		return sizeof(struct rdma_ucm_accept);
	case RDMA_USER_CM_CMD_DISCONNECT:
		return sizeof(struct rdma_ucm_disconnect);
	default:
		return 0;
	}
}

struct emu_ducma_posted {
	uint32_t cmd, id; /* the posted command and the id it named (CREATE_ID: the handle) */
	uint32_t val;	  /* DESTROY_ID: the daemon's events_reported; else 0 */
	uint32_t pad;
};

/* UCMA_VERDICT: a RESOLVE_ADDR or RESOLVE_IP of these very bytes (the command's struct, its
 * id 0) on an id of the file as CREATE_ID (of port space ps and qp_type) left it returns 0,
 * while the daemon does not take the verdict back (it does on any move of the host's
 * neighbour generation and on device removal). */
#define EMU_DUCMA_KEY_MAX 320u
/* The largest command a client posts (CONNECT, ACCEPT: a conn_param with 56 bytes of private
 * data and the ECE; RESOLVE_ADDR: two sockaddr_storage). */
#define EMU_DUCMA_POST_MAX 320u
_Static_assert(sizeof(struct rdma_ucm_accept) <= EMU_DUCMA_POST_MAX &&
		       sizeof(struct rdma_ucm_connect) <= EMU_DUCMA_POST_MAX &&
		       sizeof(struct rdma_ucm_resolve_addr) <= EMU_DUCMA_POST_MAX,
	       "every posted command fits a post");
struct emu_ducma_verdict {
	uint32_t cmd;
	uint16_t ps;
	uint8_t qp_type;
	uint8_t pad;
	uint32_t klen;
	uint8_t key[EMU_DUCMA_KEY_MAX];
};
#define EMU_DUCMA_VERDICT_USES 64u /* posts granted at a time; renewed every half */

/* Spare handles the daemon keeps reserved for a file's posted CREATE_IDs: topped up to MAX
 * whenever fewer than MAX / 2 are left. */
#define EMU_DUCMA_SPARE_MAX 64u


struct emu_ducma_opened {
	int32_t dfd; /* the daemon's number for the file (MIGRATE_ID names files by it) */
};

/* UCMA_WRITE's body: this, then `in` bytes (struct rdma_ucm_cmd_hdr and the command, its
 * out field clamped to EMU_DUCMA_MAX_OUT), then `opt` bytes (SET_OPTION's value). `out` is
 * the response buffer's size; its bytes stay with the client (protocol 8: the answer brings
 * the prefix the command wrote, laid over the buffer). */
struct emu_ducma_write {
	uint32_t in, out, opt;
};

/* Where a command keeps its user pointers: body offsets (after the header), -1 for none. */
struct emu_ducma_ptrs {
	int resp;    /* u64 address of the response buffer (hdr.out bytes) */
	int opt;     /* u64 address of an input buffer ... */
	int opt_len; /* ... whose u32 length is here */
	int id;	     /* the u32 id of an existing rdma_cm id it names; -1: none that can be
		      * told (or a multicast handle); -2: it names none (CREATE_ID) */
};

static inline struct emu_ducma_ptrs emu_ducma_ptrs_of(uint32_t cmd)
{
	struct emu_ducma_ptrs p = { -1, -1, -1, -1 };

	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID:
		p.resp = (int)offsetof(struct rdma_ucm_create_id, response);
		p.id = -2;
		break;
	case RDMA_USER_CM_CMD_DESTROY_ID:
		p.resp = (int)offsetof(struct rdma_ucm_destroy_id, response);
		p.id = (int)offsetof(struct rdma_ucm_destroy_id, id);
		break;
	case RDMA_USER_CM_CMD_LEAVE_MCAST: /* its id is the membership's handle */
		p.resp = (int)offsetof(struct rdma_ucm_destroy_id, response);
		break;
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY:
		p.resp = (int)offsetof(struct rdma_ucm_query, response);
		p.id = (int)offsetof(struct rdma_ucm_query, id);
		break;
	case RDMA_USER_CM_CMD_INIT_QP_ATTR:
		p.resp = (int)offsetof(struct rdma_ucm_init_qp_attr, response);
		p.id = (int)offsetof(struct rdma_ucm_init_qp_attr, id);
		break;
	case RDMA_USER_CM_CMD_BIND_IP:
		p.id = (int)offsetof(struct rdma_ucm_bind_ip, id);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		p.id = (int)offsetof(struct rdma_ucm_resolve_ip, id);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE:
		p.id = (int)offsetof(struct rdma_ucm_resolve_route, id);
		break;
	case RDMA_USER_CM_CMD_CONNECT:
		p.id = (int)offsetof(struct rdma_ucm_connect, id);
		break;
	case RDMA_USER_CM_CMD_LISTEN:
		p.id = (int)offsetof(struct rdma_ucm_listen, id);
		break;
	case RDMA_USER_CM_CMD_ACCEPT:
		p.id = (int)offsetof(struct rdma_ucm_accept, id);
		break;
	case RDMA_USER_CM_CMD_REJECT:
		p.id = (int)offsetof(struct rdma_ucm_reject, id);
		break;
	case RDMA_USER_CM_CMD_DISCONNECT:
		p.id = (int)offsetof(struct rdma_ucm_disconnect, id);
		break;
	case RDMA_USER_CM_CMD_NOTIFY:
		p.id = (int)offsetof(struct rdma_ucm_notify, id);
		break;
	case RDMA_USER_CM_CMD_BIND:
		p.id = (int)offsetof(struct rdma_ucm_bind, id);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		p.id = (int)offsetof(struct rdma_ucm_resolve_addr, id);
		break;
	case RDMA_USER_CM_CMD_GET_EVENT:
		p.resp = (int)offsetof(struct rdma_ucm_get_event, response);
		break;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
		p.resp = (int)offsetof(struct rdma_ucm_join_ip_mcast, response);
		break;
	case RDMA_USER_CM_CMD_JOIN_MCAST:
		p.resp = (int)offsetof(struct rdma_ucm_join_mcast, response);
		break;
	case RDMA_USER_CM_CMD_MIGRATE_ID:
		p.resp = (int)offsetof(struct rdma_ucm_migrate_id, response);
		break;
	case RDMA_USER_CM_CMD_SET_OPTION:
		p.opt = (int)offsetof(struct rdma_ucm_set_option, optval);
		p.opt_len = (int)offsetof(struct rdma_ucm_set_option, optlen);
		p.id = (int)offsetof(struct rdma_ucm_set_option, id);
		break;
	default:
		break;
	}
	return p;
}

#endif
