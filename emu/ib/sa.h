/* The fake Subnet Administrator: a pure request -> response engine over SA MADs
 * (emu/ib/mad.h). No timers, no threads: the engine runner receives a MAD on QP1 of the SM's LID,
 * asks emu_sa_process() what to do (drop, delay) and what to answer, and sends the answer.
 *
 * Records:
 *  - PathRecord Get/GetTable, computed as OpenSM does (osm_sa_path_record.c) from the fabric:
 *    end points by SGID/DGID (unknown: ERR_REQ_INVALID_GID) or SLID/DLID (unknown:
 *    ERR_NO_RECORDS); the route through the topology's switches (emu_topology_switch_route);
 *    MTU = min of the end ports' active MTUs (and the `sm mtu=` cap), rate = min over the links
 *    (and the `sm rate=` cap), SL and packet lifetime from the `sm` line; a P_Key both ports
 *    hold (not both limited members) or no record; selectors 0 >, 1 <, 2 =, 3 best; LMC: the
 *    diagonal SLID/DLID pairs first (Preference 0), then the others (Preference 2), up to
 *    NumbPath for GetTable, one for Get. Responses carry selector 2 ("exactly") and
 *    Reversible = 1 when the reverse path exists, NumbPath 0, like OpenSM.
 *  - MCMemberRecord Set (join), Delete (leave), Get/GetTable; MGIDs allocated as OpenSM does
 *    (ff1<scope>:a01b:<subnet prefix>, a counter in bytes 10-13), MLIDs from 0xC000; the IPoIB
 *    broadcast group of the default partition exists from the start (MLID 0xC000).
 *  - NodeRecord Get/GetTable (emu/ib/sa_node.c): one per end port, CA ports with their LID and
 *    port GUID, each switch once for port 0, in OpenSM's node-table order; NodeInfo from the
 *    device (GUIDs, vendor/part ID, hw_ver as Revision, max_pkeys as PartitionCap) or the
 *    topology's switch (vendid/devid, no P_Key table: PartitionCap 0).
 *  - ServiceRecord Set/Get/GetTable/Delete, keyed by (ID, GID, P_Key), with leases expiring
 *    against the time given by emu_sa_set_time().
 *  - Replayed PathRecords (saquery PR output): when any replayed record matches a PathRecord
 *    query (component mask), the answer is the replayed records, not computed ones.
 * Responses: Get/Set answer one 256-byte MAD; GetTable answers one RMPP message (SA header +
 * N records at AttributeOffset strides) that emu_sa_rmpp_segment() cuts into 256-byte DATA
 * segments (the RMPP window/ACK exchange is the engine's business).
 */
#ifndef RDMAEMU_EMU_SA_H
#define RDMAEMU_EMU_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emu/sim/fabric.h"
#include "emu/ib/mad.h"

struct emu_sa;
struct emu_topology;

/* Faults and timing applied by emu_sa_decide(). Counters act first, then probabilities. */
struct emu_sa_policy {
	uint64_t response_delay_ns; /* default: the fabric's `sm response-delay=` */
	unsigned drop_next;         /* the next N requests get no answer (the client times out) */
	double drop;                /* then each request is dropped with this probability */
	unsigned busy_next;         /* the next N requests are answered with MAD status BUSY */
	double busy;
	uint16_t error_status;      /* non-zero: every answer carries this status, no records */
	uint16_t error_attr;        /* ... only for this attribute (0: all) */
};

enum emu_sa_verdict {
	EMU_SA_ANSWER,
	EMU_SA_DROP,  /* no answer */
	EMU_SA_BUSY,  /* answer with status BUSY */
	EMU_SA_ERROR, /* answer with policy.error_status */
};
const char *emu_sa_verdict_name(enum emu_sa_verdict v);

/* NULL with errno ENODEV when the fabric has no SM (`sm none`, or no IB ports), ENOMEM. f (and
 * t) must outlive the SA. t == NULL: paths only between ports cabled to each other or to one
 * common switch (for tests without a wire). */
struct emu_sa *emu_sa_new(const struct emu_fabric *f, const struct emu_topology *t);
void emu_sa_free(struct emu_sa *sa);
struct emu_sa_policy *emu_sa_policy(struct emu_sa *sa);
/* Paths to this DGID (a port GID) do not exist while set. 0 or -ENOMEM. */
int emu_sa_set_unreachable(struct emu_sa *sa, const uint8_t dgid[16], bool unreachable);
/* The virtual time, for ServiceRecord leases. */
void emu_sa_set_time(struct emu_sa *sa, uint64_t now_ns);

/* The fault decision for the next request: draws exactly two values from the SA's PRNG stream
 * (fork of the fabric seed, domain EMU_PRNG_DOMAIN_SA), whatever the policy, so that changing
 * the policy never shifts later decisions. *delay_ns (may be NULL): when to answer. */
enum emu_sa_verdict emu_sa_decide(struct emu_sa *sa, uint64_t *delay_ns);

/* Answers one request MAD (len >= 56 bytes; the UD payload from QP1). *resp is malloc'd, the
 * caller frees it. Returns 0 with a response, -EINVAL for what an SA ignores without answering
 * (too short, not the SA class, a response method), -ENOMEM. */
int emu_sa_handle(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		  size_t *resp_len);
/* emu_sa_decide + emu_sa_handle (+ BUSY / forced error): 0 with *resp (NULL when dropped). */
int emu_sa_process(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		   size_t *resp_len, uint64_t *delay_ns);

/* RMPP segments of a GetTableResp message: how many, and segment `seg` (1-based) as a full
 * 256-byte MAD (SegmentNumber, First/Last flags, PayloadLength as IBTA 13.6.2.3 counts it: the
 * whole message in the first segment, that segment's bytes in the last, 0 in the middle).
 * -EINVAL for a bad segment number or message. */
unsigned emu_sa_rmpp_nsegs(size_t msg_len);
int emu_sa_rmpp_segment(const uint8_t *msg, size_t msg_len, unsigned seg, uint8_t out[EMU_MAD_LEN]);

/* Replay: loads `saquery PR` ("PathRecord dump:" blocks) output. Returns the number of records
 * loaded, or -1 with *err filled (err may be NULL) and errno EINVAL/ENOENT/ENOMEM. */
int emu_sa_replay_saquery(struct emu_sa *sa, const char *text, const char *name,
			  struct emu_error *err);
int emu_sa_replay_saquery_file(struct emu_sa *sa, const char *path, struct emu_error *err);
size_t emu_sa_replay_count(const struct emu_sa *sa);

/* Lookups for tests and tracing. */
size_t emu_sa_mcgroup_count(const struct emu_sa *sa);
/* The JoinState of port_gid in the group mgid (0: not a member), *mlid (may be NULL) the
 * group's MLID. -ENOENT: no such group. */
int emu_sa_mcgroup_member(const struct emu_sa *sa, const uint8_t mgid[16],
			  const uint8_t port_gid[16], uint16_t *mlid);
size_t emu_sa_service_count(const struct emu_sa *sa);

#endif
