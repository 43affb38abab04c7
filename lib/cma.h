/* Internal interface of the emulated librdmacm (the counterpart of rdma-core's cma.h). */
#ifndef RDMAEMU_LIB_CMA_H
#define RDMAEMU_LIB_CMA_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include "rdmaemu/compat.h"
#include "util/kmem.h"

/* The rdma-core generation this librdmacm.so.1 behaves as, 44 or 61 (lib/personality.c, one
 * per linked library; docs/rdma-core-generations.md lists what differs). */
extern const int cma_rdma_core;

/* librdmacm's error convention: set errno, return -1. */
static inline int cma_err(int e)
{
	errno = e;
	return -1;
}

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* ucma_init() (lib/init.c): the first call that needs "this machine" attaches the process to
 * its emulated host. Returns 0, or -1 with errno ENODEV when the host has no RDMA device
 * (exactly what the real library reports without hardware, spec §3.1) or the fabric could not
 * be loaded, EPERM for an rdma_cm ABI the library does not speak. */
int cma_init(void);

/* ucma_set_af_ib_support lives with the ids it creates (lib/cma_id.c), which hand it to
 * lib/init.c when the library is loaded; cma_init runs it last, once devices exist, as
 * ucma_init does, until it returns true (done). cma_af_ib_support() is its answer
 * (rdma-core's af_ib_support). */
void cma_init_set_af_ib_probe(bool (*probe)(void));
bool cma_af_ib_support(void);

/* rdma-core's internal flag (librdmacm/cma.h) for rdma_resolve_route's own ibacm lookup: the
 * route only, no AF_IB entry in front. No public header has it. */
#define RAI_ROUTEONLY 0x01000000

/* rdma-core's struct ib_connect_hdr: the CMA header an AF_IB connection to an IP service
 * carries at the start of its private data (rdma_addrinfo.ai_connect). */
struct cma_ib_connect_hdr {
	uint8_t cma_version;
	uint8_t ip_version; /* 7:4 */
	uint16_t port;
	uint32_t src_addr[4]; /* IPv4 in [3] */
	uint32_t dst_addr[4];
};
_Static_assert(sizeof(struct cma_ib_connect_hdr) == 36, "ib_connect_hdr is 36 bytes");

/* ---- CM ids, channels and devices (lib/cma_*.c) --------------------------------------- */

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "emu/rdma_cm/ucma_api.h"
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma_abi.h>

/* ucma_abi_event_resp (v60 added arg32 to the union for USER/INTERNAL events). The kernel's
 * reserved word before ece (rdma_user_cm.h) is inside rdma-core's union: its ud_param ends
 * with reserved2[4], so ece is at byte 328 in both. */
struct cma_event_resp {
	__u64 uid;
	__u32 id;
	__u32 event;
	__u32 status;
	union {
		struct ucma_abi_conn_param conn;
		struct ucma_abi_ud_param ud;
		__u32 arg32[2];
	} param;
	struct ucma_abi_ece ece;
};
_Static_assert(offsetof(struct cma_event_resp, ece) == 328, "ece where the kernel puts it");

/* One RDMA device as librdmacm sees it (rdma-core's struct cma_device): opened lazily, with a
 * default PD for the ids bound to it. */
struct cma_device {
	struct ibv_device *dev;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	uint64_t guid;          /* host byte order */
	uint32_t max_qpsize;
	uint8_t max_initiator_depth;
	uint8_t max_responder_resources;
	int port_cnt;
	int refcnt;
	bool dead;              /* could not be opened */
	struct ibv_xrcd *xrcd;
};

struct cma_multicast {
	struct cma_multicast *next;
	struct cma_id_private *id_priv;
	void *context;
	int events_completed;
	uint32_t handle;
	union ibv_gid mgid;
	uint16_t mlid;
	uint16_t join_flags;
	struct sockaddr_storage addr;
};

/* The library's id (rdma-core's struct cma_id_private). Everything after `id` is zero in a
 * zero-filled dummy id, and every call reaches the kernel (which fails on the dummy's fd)
 * before it relies on more than that. */
struct cma_id_private {
	struct rdma_cm_id id;
	struct cma_device *cma_dev;
	void *connect;
	uint8_t connect_len;
	int events_completed;
	int connect_error;
	int sync;
	uint32_t handle;
	struct cma_multicast *mc_list;
	struct ibv_qp_init_attr *qp_init_attr;
	uint8_t initiator_depth;
	uint8_t responder_resources;
	struct ibv_ece local_ece;
	struct ibv_ece remote_ece;
	bool resolving_ai;
	struct rdma_addrinfo *resolved_ai;
};

struct cma_event {
	struct rdma_cm_event event;
	uint8_t private_data[RDMA_MAX_PRIVATE_DATA];
	struct cma_id_private *id_priv;
	struct cma_multicast *mc;
};

static inline struct cma_id_private *cma_priv(struct rdma_cm_id *id)
{
	return container_of(id, struct cma_id_private, id);
}

/* Builds the header of a ucma_abi command: in = size - header, out = resp size. */
#define CMA_INIT_CMD(req, req_size, op)                                                  	do {                                                                             		memset(req, 0, req_size);                                                		(req)->cmd = UCMA_CMD_##op;                                              		(req)->in = (__u16)((req_size) - sizeof(struct ucma_abi_cmd_hdr));      	} while (0)
#define CMA_INIT_CMD_RESP(req, req_size, op, resp, resp_size)                            	do {                                                                             		CMA_INIT_CMD(req, req_size, op);                                         		(req)->out = (__u16)(resp_size);                                         		(req)->response = (uintptr_t)(resp);                                     	} while (0)

/* write(fd, cmd, size) to the emulated rdma_cm (lib/ucma.c): 0, or -1 with errno (a short
 * write: ENODATA). */
int cma_write(int fd, void *cmd, size_t size);

/* Devices (lib/cma_dev.c). */
int cma_dev_sync(void);
/* Associates id_priv with the device of that GUID (opening it), sets id->verbs/pd. */
int cma_get_device(struct cma_id_private *id_priv, uint64_t guid);
void cma_put_device(struct cma_device *dev);
struct cma_device *cma_dev_of_verbs(struct ibv_context *verbs);

/* Event records and their acks (lib/cma_ack.c). */
struct cma_event *cma_event_alloc(void);
void cma_event_free(struct cma_event *evt);
/* Blocks until *completed >= reported; the engine does not wait for the blocked thread. */
void cma_wait_acked(const char *what, int *completed, int reported);
/* An event the library swallowed (after a CONNECT_ERROR) still counts as acked for destroy. */
void cma_ack_swallowed(struct cma_id_private *id_priv);

/* QP transitions on the kernel's attributes (lib/cma_qp.c). */
int cma_modify_qp_err(struct rdma_cm_id *id);
int cma_modify_qp_rtr(struct rdma_cm_id *id, uint8_t resp_res);
int cma_modify_qp_rts(struct rdma_cm_id *id, uint8_t init_depth);

/* Ids (lib/cma_id.c). */
int cma_query_addr(struct rdma_cm_id *id);
int cma_query_gid(struct rdma_cm_id *id);
int cma_query_path(struct rdma_cm_id *id);
struct cma_id_private *cma_alloc_id(struct rdma_event_channel *channel, void *context,
				    enum rdma_port_space ps, enum ibv_qp_type qp_type);
void cma_free_id(struct cma_id_private *id_priv);
int cma_destroy_kern_id(int fd, uint32_t handle);
socklen_t cma_addrlen(const struct sockaddr *addr);

static inline bool cma_is_ud_qp(enum ibv_qp_type qp_type)
{
	return qp_type == IBV_QPT_UD;
}

/* Sync ids: ack the held event, wait for the next one, map its status (spec §6.1;
 * lib/cma_event.c). */
int cma_complete(struct rdma_cm_id *id);

/* The v60 calls the installed rdma-core 44 header does not declare (RDMACM_1.4). */
int rdma_resolve_addrinfo(struct rdma_cm_id *id, const char *node, const char *service,
			  const struct rdma_addrinfo *hints);
int rdma_query_addrinfo(struct rdma_cm_id *id, struct rdma_addrinfo **info);
int rdma_write_cm_event(struct rdma_cm_id *id, enum rdma_cm_event_type event, int status,
			uint64_t arg);

/* What rdma_resolve_addrinfo leaves on an id (lib/id_addrinfo.c): RESOLVE_IB_SERVICE for
 * `service` (numeric: a ServiceID, else a ServiceName) on the bound id, 0 or -1 with errno
 * (the kernel's answer to the command); after ADDRINFO_RESOLVED the kernel's records as an
 * AF_IB list (no ai_src_addr), 0 or -1 with errno (ENOENT: no records; the QUERY's error). */
int cma_resolve_ib_service(struct cma_id_private *id_priv, const char *service);
int cma_query_ib_service(struct cma_id_private *id_priv, struct rdma_addrinfo **res);

#endif
