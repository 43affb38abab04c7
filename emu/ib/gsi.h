/* The MAD layer (the kernel's ib_mad + mad_rmpp in miniature): QP1, the General Services
 * Interface, on the emulated wire.
 *
 * Ports. A GSI port is QP1 of one host port (claimed through emu_engine_port_set_rx_qpn) or the
 * management port 0 of an IB switch (emu_topology_set_switch_local_rx), where an SM/SA may run.
 * Sending a MAD puts a UD SEND_ONLY packet on the wire (emu_pkt_build): BTH with the P_Key and
 * DestQP, DETH with Q_Key 0x80010000 and source QP 1; on IB an LRH (SLID = the port's LID,
 * DLID, SL; a GRH when asked), on RoCE Ethernet/IP/UDP 4791 (the CM's MADs: RoCE has no SA).
 * Receiving parses the frame (emu_pkt_parse: lengths, ICRC, VCRC), checks what an HCA checks
 * for QP1 (UD SEND_ONLY, Q_Key 0x80010000, a P_Key of the port's table) and what ib_mad checks
 * (base version 1, a 256-byte MAD, no SMP class on QP1), then dispatches as ib_mad does:
 *   - a response (method bit 7, or TrapRepress) goes to the agent whose hi_tid is the upper 32
 *     bits of the TID, which completes the matching send (TID + class), if any;
 *   - a request goes to the agent registered as server for (class, class version).
 * Nothing else is delivered (counted in the port's counters).
 *
 * Sends. A send with timeout_ms != 0 waits for a response: after timeout_ms of virtual time
 * without one it is sent again, `retries` times, then completes with -ETIMEDOUT: exactly
 * (retries + 1) * timeout_ms after the first send. timeout_ms == 0: no response expected, the
 * send completes (status 0) once on the wire (an RMPP send: once its last segment is ACKed).
 * Completion statuses (the kernel's ib_wc_status of the send): 0 IB_WC_SUCCESS (resp set when
 * a response arrived), -ETIMEDOUT IB_WC_RESP_TIMEOUT_ERR, -EINTR IB_WC_WR_FLUSH_ERR (cancelled,
 * or the agent unregistered), -ECONNABORTED IB_WC_REM_ABORT_ERR (the peer aborted RMPP), -EIO
 * (the packet could not be sent: no MAC for a RoCE destination GID, the wire refused it).
 *
 * RMPP (IBTA 13.6, the kernel's mad_rmpp.c) for agents registered with EMU_GSI_RMPP, on the
 * RMPP classes (SA): a message longer than 256 bytes is sent as DATA segments under the
 * receiver's window (1 until the first ACK, then the NewWindowLast the receiver gives; ACK
 * wait 2 s as in mad_rmpp.c, resent from the last ACKed segment on timeout, `retries` times).
 * The receiver reassembles in order, ACKs the first segment and each time its window fills
 * (window = 64 segments, the kernel's 512-entry receive queue / 8) and ACKs the last one; it
 * re-ACKs duplicates; out-of-window segments are dropped. The agent then gets the whole message.
 *
 * Trace: RDMAEMU_TRACE=mad prints one line per MAD sent/received/dropped and per send state
 * transition (name table below).
 *
 * Everything runs with the engine lock held. */
#ifndef RDMAEMU_EMU_GSI_H
#define RDMAEMU_EMU_GSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/ib/mad.h"

struct emu_engine;
struct emu_gsi;
struct emu_gsi_port;
struct emu_gsi_agent;
struct emu_gsi_send;

/* Where a MAD goes or comes from: the kernel's address handle + remote QP/Q_Key. */
struct emu_gsi_addr {
	uint16_t lid;     /* IB: DLID to send to / SLID received from */
	uint8_t sl;
	bool grh;         /* IB: send (was received with) a GRH; RoCE: always */
	uint8_t gid[16];  /* remote GID (GRH / RoCE IP address as a GID) */
	uint8_t hop_limit, tclass;
	uint32_t flow_label;
	uint32_t qpn;     /* remote QP: 1 for the GSI */
	uint32_t qkey;    /* 0 means EMU_QP1_QKEY */
	uint16_t pkey;    /* BTH P_Key; 0 means the port's first P_Key */
	uint8_t mac[6];   /* RoCE: received from (informative; sends resolve the MAC) */
};

/* A received MAD: one 256-byte MAD, or a whole reassembled RMPP message. */
struct emu_gsi_recv {
	const uint8_t *mad;
	size_t len;
	struct emu_gsi_addr from;
	struct emu_gsi_port *port;
};

typedef void emu_gsi_recv_fn(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx);
/* status: 0 (resp non-NULL when a response completed the send), -ETIMEDOUT, -EINTR,
 * -ECONNABORTED, -EIO. The send is freed when this returns. */
typedef void emu_gsi_done_fn(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp,
			     void *ctx);

/* The engine's MAD layer, created on first use (and freed by emu_engine_reset, which frees
 * the engine's attachments newest first: a layer that keeps agents in its own attachment
 * (emu/sim/engine_ext.h) calls emu_gsi_get before attaching itself, so that it is freed, and
 * unregisters its agents, before the MAD layer goes). NULL with errno ENOMEM. */
struct emu_gsi *emu_gsi_get(struct emu_engine *e);
struct emu_engine *emu_gsi_engine(const struct emu_gsi *g);

/* QP1 of port `port` (1-based) of device `dev` of host `host`, opened on first use (claims
 * DestQP 1 there). NULL with errno ENOENT (no such port), ENOSPC (no QPN claim left), ENOMEM. */
struct emu_gsi_port *emu_gsi_port_get(struct emu_gsi *g, size_t host, size_t dev, unsigned port);
/* The GSI of switch `sw`'s management port 0. NULL with errno ENOENT or ENOMEM. */
struct emu_gsi_port *emu_gsi_switch_port_get(struct emu_gsi *g, size_t sw);
/* The port (host port or switch) whose LID range holds `lid`, opened on first use (the SM's
 * port, for the SA). NULL with errno ENOENT. */
struct emu_gsi_port *emu_gsi_port_by_lid(struct emu_gsi *g, uint16_t lid);

struct emu_gsi_port_info {
	int link_layer;   /* EMU_LL_* */
	bool is_switch;
	uint16_t lid, sm_lid;
	uint8_t lmc, sm_sl;
	uint8_t gid[16];  /* GID 0 */
	uint16_t pkey;    /* P_Key table entry 0 */
};
void emu_gsi_port_info(const struct emu_gsi_port *p, struct emu_gsi_port_info *out);

struct emu_gsi_port_counters {
	uint64_t sent, received;     /* packets */
	uint64_t dropped_parse;      /* emu_pkt_parse refused it (ICRC, lengths) */
	uint64_t dropped_qkey, dropped_pkey, dropped_bad_mad; /* QP1 / ib_mad checks */
	uint64_t dropped_no_agent;   /* no server for the class, no agent for the hi_tid */
	uint64_t dropped_unmatched;  /* a response matching no send */
	uint64_t rmpp_acks_sent, rmpp_acks_received;
	/* MADs that arrived from a port of this process as a description, no frame built (the
	 * fast path, emu_gsi_xmit), whatever QP1's checks then did with them; the only counter
	 * the fast path changes */
	uint64_t received_described;
};
void emu_gsi_port_counters(const struct emu_gsi_port *p, struct emu_gsi_port_counters *out);

/* ---- agents ---- */

#define EMU_GSI_SERVER 0x1 /* receives requests (unsolicited MADs) of its class/version */
#define EMU_GSI_RMPP 0x2   /* the layer does RMPP for it (rmpp_version 1 in ib_mad terms) */

/* An agent of management class `mgmt_class`, version `class_version` on port p. recv (may be
 * NULL for a client that only sends) gets unsolicited requests (EMU_GSI_SERVER). NULL with
 * errno EBUSY (a server for that class/version exists on the port), EINVAL, ENOMEM. */
struct emu_gsi_agent *emu_gsi_agent_register(struct emu_gsi_port *p, uint8_t mgmt_class,
					     uint8_t class_version, unsigned flags,
					     emu_gsi_recv_fn *recv, void *ctx);
/* Cancels the agent's sends (their completions run with -EINTR) and frees it. */
void emu_gsi_agent_unregister(struct emu_gsi_agent *a);
struct emu_gsi_port *emu_gsi_agent_port(const struct emu_gsi_agent *a);
/* A new TID of this agent: hi_tid << 32 | a per-agent counter (as sa_query.c's init_mad). */
uint64_t emu_gsi_agent_new_tid(struct emu_gsi_agent *a);

/* Sends mad[0..len) (len >= 256; more only for an RMPP agent on an RMPP class: the message
 * with one header, cut into segments here) to `to`. The MAD is copied. done (may be NULL)
 * runs exactly once, never from inside this call. Returns the send, or NULL with *err (may be
 * NULL) -EINVAL (bad length/argument), -ENOMEM; errors of the wire show in the completion. */
struct emu_gsi_send *emu_gsi_send(struct emu_gsi_agent *a, const struct emu_gsi_addr *to,
				  const uint8_t *mad, size_t len, uint32_t timeout_ms,
				  unsigned retries, emu_gsi_done_fn *done, void *ctx, int *err);
/* Completes a pending send with -EINTR now (ib_cancel_mad). */
void emu_gsi_cancel(struct emu_gsi_send *s);
/* Answers a received request: response MAD `mad` (the caller sets the method and status) to
 * where r came from (source LID/GID, QP, P_Key), through RMPP when longer than 256 bytes. */
int emu_gsi_respond(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, const uint8_t *mad,
		    size_t len);

/* Send states (one trace line per transition). */
enum emu_gsi_send_state {
	EMU_GSI_SEND_ACTIVE,    /* on the wire, waiting for its response or RMPP ACKs */
	EMU_GSI_SEND_WAIT_RESP, /* RMPP: all segments ACKed, waiting for the response */
	EMU_GSI_SEND_DONE,
	EMU_GSI_SEND_NSTATES
};
const char *emu_gsi_send_state_name(enum emu_gsi_send_state s);

/* ---- the RoCE destination MAC (a seam for the neighbour module) ----
 * How a GSI send on a RoCE port finds the destination MAC of a GID. The default looks the GID
 * up among the fabric's RoCE ports and takes the MAC of the netdev behind the owning port.
 * 0, or -EHOSTUNREACH. */
typedef int emu_gsi_mac_fn(struct emu_engine *e, const struct emu_gsi_port *from,
			   const uint8_t dgid[16], uint8_t mac[6]);
void emu_gsi_set_mac_resolver(struct emu_gsi *g, emu_gsi_mac_fn *fn);
int emu_gsi_mac_from_fabric(struct emu_engine *e, const struct emu_gsi_port *from,
			    const uint8_t dgid[16], uint8_t mac[6]);

/* The RMPP classes (13.6.1: those whose MADs carry an RMPP header): SA, and the vendor
 * classes 0x30-0x4f. */
bool emu_gsi_class_is_rmpp(uint8_t mgmt_class);
bool emu_gsi_mad_is_response(const uint8_t *mad);

/* The fast path: a MAD from a RoCE port of this process to another goes on the wire as its
 * description; the frame is built only for a capture or a receiver that reads bytes (emu/sim/wire.h
 * emu_wire_send_lazy). Nothing observable changes. On unless RDMAEMU_CM_FASTPATH=0; tests
 * switch it to compare the two paths. */
void emu_gsi_set_fastpath(bool on);

/* RDMAEMU_TRACE contains "mad". */
bool emu_gsi_trace_on(void);
void emu_gsi_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
