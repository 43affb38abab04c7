/* Helpers of the CM-id cases (case_cmid.c, case_cmbind.c, case_cmqp.c): dummy ids, local RDMA
 * addresses found through the devices' GID tables, and the v60 calls found with dlsym (the
 * suite builds against rdma-core 44 headers and must run against a v44 library). */
#ifndef CONFORMANCE_CM_UTIL_H
#define CONFORMANCE_CM_UTIL_H

#include <stdbool.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

/* A zero-filled id (room for any library's private part) whose channel has fd `fd`: the
 * spec's DI `yes` stimulus, valid where the library rejects the call before using more. */
struct rdma_cm_id *cm_dummy_id(int fd);

/* The idx-th local IPv4 address of an RDMA port (a ::ffff:a.b.c.d GID), with `port`; its
 * device context in *verbs if non-NULL. A variant's local address or --local replaces the
 * scan (idx 0 only). Ends the case with Notrun when there is none. */
void cm_local_ipv4(unsigned idx, uint16_t port, struct sockaddr_in *sin,
		   struct ibv_context **verbs);

/* The same without ending the case: false when there is no idx-th address. */
bool cm_local_ipv4_try(unsigned idx, uint16_t port, struct sockaddr_in *sin,
		       struct ibv_context **verbs);

/* The address the passive side of a connection row listens on: in a two-node variant the
 * peer host's (emu: the variant's; system: --peer), else the local one (loopback). */
void cm_peer_ipv4(uint16_t port, struct sockaddr_in *sin);

/* Two-node variant on the emulator: the event channels this thread creates from now on
 * belong to the peer host (on) or to the own host again (off). No-op otherwise. */
void cm_as_peer(bool on);

/* Which halves of a connection case this process runs: both (one host, or the emulator
 * playing both hosts), or one of them (a two-node case on the system target). */
enum cm_role { CM_BOTH, CM_ACTIVE, CM_PASSIVE };
enum cm_role cm_role(void);

/* Ends the case with Notrun unless this process runs both halves. */
void cm_need_both_roles(void);

/* A sockaddr_in from text ("0.0.0.0"), port in host order. */
void cm_ipv4(const char *text, uint16_t port, struct sockaddr_in *sin);

/* Channel and id, or the case ends as failed. */
struct rdma_event_channel *cm_channel(void);
struct rdma_cm_id *cm_id(struct rdma_event_channel *ch, enum rdma_port_space ps);

/* Whether the channel's fd is readable now (poll with timeout 0). */
int cm_readable(struct rdma_event_channel *ch);

/* rdma_write_cm_event (v60), or the case ends as Notrun below v60. */
typedef int (*cm_write_event_fn)(struct rdma_cm_id *, enum rdma_cm_event_type, int, uint64_t);
cm_write_event_fn cm_write_event(void);

/* An rdma_cm event type, shown by name when it is not the one wanted. */
#define CM_EXPECT_EVENT(what, got, want)                                                  \
	conf_expect((got) == (want), "%s: %s, want %s", (what), rdma_event_str(got),      \
		    rdma_event_str(want))

/* errno of a -1 result, or a conf_expect failure if the call returned something else. */
#define CM_EXPECT_FAIL(what, ret, e, want)                                                \
	do {                                                                              \
		EXPECT_INT(what ": ret", (ret), -1);                                      \
		EXPECT_ERRNO(what, (e), (want));                                          \
	} while (0)

#endif
