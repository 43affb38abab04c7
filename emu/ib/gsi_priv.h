/* Internals of the MAD layer shared by emu/ib/gsi*.c. */
#ifndef RDMAEMU_EMU_GSI_PRIV_H
#define RDMAEMU_EMU_GSI_PRIV_H

#include "emu/sim/clock.h"
#include "emu/sim/fabric.h"
#include "emu/ib/gsi.h"
#include "emu/sim/list.h"
#include "emu/sim/wire.h"

#define EMU_GSI_RMPP_WINDOW 64        /* mad_rmpp.c window_size: 512 receive WRs >> 3 */
#define EMU_GSI_RMPP_ACK_WAIT_MS 2000 /* mad_rmpp.c send_next_seg: ACK wait cap */
#define EMU_GSI_RMPP_RECV_TIMEOUT_MS 40000 /* mad_rmpp.c start_rmpp: whole-transfer limit */
#define EMU_GSI_RMPP_CLEANUP_MS 10000 /* mad_rmpp.c complete_rmpp: keep to re-ACK dups */
#define EMU_RMPP_HDR_END 36           /* MAD header + RMPP header */

struct emu_gsi {
	struct emu_engine *e;
	struct emu_gsi_port **ports;
	size_t nports;
	uint32_t next_hi_tid;
	emu_gsi_mac_fn *mac;
};

struct emu_gsi_port {
	struct emu_gsi *g;
	bool is_switch;
	size_t host, dev, sw;
	unsigned num;
	const struct emu_port *port; /* NULL on a switch */
	struct emu_gsi_port_info info;
	struct emu_list agents;
	uint32_t psn;
	struct emu_gsi_port_counters cnt;
	struct emu_list loopback; /* struct gsi_loop frames to this port itself, in flight */
	/* Frame length of a described (fast-path) MAD from this RoCE port, [1]: IPv4 (both GIDs
	 * IPv4-mapped), [0]: IPv6; 0 until the first. The layout depends on nothing else: a UD
	 * SEND_ONLY with DETH and 256 bytes on Ethernet. */
	ssize_t lazy_frame_len[2];
	/* RoCE: the last destination GID's route (emu_gsi_xmit), three scans of GID tables
	 * (~370 instructions a MAD), kept while the GID tables and the MAC resolver stay as
	 * they are; fabric NULL until the first */
	struct {
		bool local;
		unsigned long gen;
		const struct emu_fabric *fabric;
		uint8_t dgid[16], sgid[16], smac[6], dmac[6];
	} route;
};

/* Cancels and frees the port's looped-back frames still in flight (gsi_free). */
void emu_gsi_loopback_flush(struct emu_gsi_port *p);

struct emu_gsi_agent {
	struct emu_list link;
	struct emu_gsi_port *p;
	uint8_t mgmt_class, class_version;
	unsigned flags;
	emu_gsi_recv_fn *recv;
	void *ctx;
	uint32_t hi_tid, tid_lo;
	struct emu_list sends;
	struct emu_list rmpp_recvs;
};

struct emu_gsi_send {
	struct emu_list link;
	struct emu_gsi_agent *a;
	struct emu_gsi_addr to;
	uint8_t *msg;
	size_t len;
	uint64_t tid;
	uint8_t mgmt_class;
	uint32_t timeout_ms;
	unsigned retries, retries_left;
	enum emu_gsi_send_state state;
	bool rmpp;
	unsigned nsegs, seg_num, last_ack, newwin; /* RMPP sender */
	struct emu_timer timer;
	emu_gsi_done_fn *done;
	void *ctx;
	int status;     /* of the deferred completion */
	bool deferred;  /* the timer completes the send (no response expected, or an error) */
};

/* gsi.c */
void emu_gsi_send_complete(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp);
void emu_gsi_send_set_state(struct emu_gsi_send *s, enum emu_gsi_send_state st, const char *why);
void emu_gsi_deliver(struct emu_gsi_agent *a, const struct emu_gsi_recv *r);
struct emu_gsi_send *emu_gsi_find_send(struct emu_gsi_agent *a, const uint8_t *mad);
/* gsi_wire.c: one 256-byte MAD on the wire from p. 0 or -errno. */
int emu_gsi_xmit(struct emu_gsi_port *p, const struct emu_gsi_addr *to, const uint8_t *mad);
void emu_gsi_port_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now);
/* Its taker of MADs described by ports of this process (emu/sim/wire.h, emu_gsi_xmit). */
extern emu_wire_rx_lazy_fn *const emu_gsi_port_rx_lazy;
/* gsi_rmpp.c */
size_t emu_gsi_data_offset(uint8_t mgmt_class);
unsigned emu_gsi_rmpp_nsegs(uint8_t mgmt_class, size_t len);
void emu_gsi_rmpp_segment(const struct emu_gsi_send *s, unsigned seg, uint8_t out[EMU_MAD_LEN]);
void emu_gsi_rmpp_send_start(struct emu_gsi_send *s);
void emu_gsi_rmpp_send_timeout(struct emu_gsi_send *s);
/* An RMPP-active MAD arrived for agent a: handles it; returns true when r now holds a whole
 * reassembled message for the agent (r->mad points into storage valid until the next call). */
bool emu_gsi_rmpp_recv(struct emu_gsi_agent *a, struct emu_gsi_recv *r, uint8_t **owned);
void emu_gsi_rmpp_agent_free(struct emu_gsi_agent *a);

#endif
