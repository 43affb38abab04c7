/* Internals of the fake SA shared by emu/ib/sa*.c. */
#ifndef RDMAEMU_EMU_SA_PRIV_H
#define RDMAEMU_EMU_SA_PRIV_H

#include "emu/sim/prng.h"
#include "emu/ib/sa.h"
#include "emu/ib/sa_groups.h"

struct emu_sa_port {
	struct emu_port *port;
};

struct emu_sa_gid {
	uint8_t raw[16];
};

struct emu_sa_service {
	struct emu_sa_service_rec rec;
	uint64_t expires_ns; /* UINT64_MAX: never */
};

struct emu_sa {
	const struct emu_fabric *f;
	const struct emu_topology *t;
	struct emu_sa_policy policy;
	struct emu_prng prng;
	uint64_t now_ns;
	struct emu_sa_port *ports;
	size_t nports, cap_ports;
	struct emu_sa_groups mc; /* the multicast groups */
	uint32_t mgid_counter; /* OpenSM's uniq_count */
	struct emu_sa_service *services;
	size_t nservices;
	uint8_t (*replay)[64]; /* wire PathRecords */
	size_t nreplay;
	struct emu_sa_gid *unreachable;
	size_t nunreachable;
	/* lookups built at creation (the fabric does not change under the SA): the CA port of
	 * each unicast LID, and the port GIDs hashed (open addressing, first port wins) */
	struct emu_port **by_lid; /* [EMU_SA_MLID_MIN] */
	struct emu_sa_gid_slot *by_gid;
	size_t by_gid_cap;
};

struct emu_sa_gid_slot {
	uint8_t gid[16];
	struct emu_port *port; /* NULL: empty */
};
/* Builds sa->by_lid and sa->by_gid from sa->ports. 0 or -ENOMEM. */
int emu_sa_index_ports(struct emu_sa *sa);

/* A growing list of wire records. */
struct emu_sa_reclist {
	uint8_t *buf;
	size_t n, cap;
};
int emu_sa_reclist_add(struct emu_sa_reclist *l, const uint8_t *rec, size_t len);

uint8_t emu_sa_resp_method(uint8_t method);
int emu_sa_respond(const uint8_t *req, size_t req_len, uint16_t status,
		   const struct emu_mad_record_desc *desc, const uint8_t *recs, size_t nrec,
		   uint8_t **out, size_t *out_len);
int emu_sa_respond_records(const uint8_t *req, size_t req_len,
			   const struct emu_mad_record_desc *desc, const uint8_t *recs, size_t nrec,
			   uint8_t **out, size_t *out_len);

/* Port lookups over the SA's IB CA ports. */
struct emu_port *emu_sa_port_by_gid(const struct emu_sa *sa, const uint8_t gid[16]);
struct emu_port *emu_sa_port_by_lid(const struct emu_sa *sa, uint16_t lid);

/* A node of the subnet: a CA (a host device with IB ports: node = host, device its index) or
 * a switch (node = its index). */
struct emu_sa_node_ref {
	uint64_t guid;
	const struct emu_device *dev;
	const struct emu_switch *sw;
	int node, device;
};
/* The subnet's nodes in the order OpenSM walks its node table (sa_node.c); free() it. NULL on
 * ENOMEM. */
struct emu_sa_node_ref *emu_sa_nodes(const struct emu_fabric *f, size_t *n);

int emu_sa_path(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		size_t *resp_len);
int emu_sa_mcmember(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		    size_t *resp_len);
int emu_sa_node(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		size_t *resp_len);
int emu_sa_portinfo(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		    size_t *resp_len);
int emu_sa_sminfo(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		  size_t *resp_len);
int emu_sa_class_port_info(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
			   size_t *resp_len);
int emu_sa_service(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		   size_t *resp_len);

/* Selector arithmetic shared by PathRecord and MCMemberRecord: applies (sel, req) to *val on a
 * scale given by key(); below(req) is the next value under req (0: none). False: no record. */
bool emu_sa_select(uint8_t sel, uint8_t req, uint8_t *val, unsigned (*key)(uint8_t),
		   uint8_t (*below)(uint8_t));
unsigned emu_sa_key_plain(uint8_t v);
uint8_t emu_sa_below_plain(uint8_t v);
unsigned emu_sa_key_rate(uint8_t v);
uint8_t emu_sa_below_rate(uint8_t v);

#endif
