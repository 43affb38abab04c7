/* MAD and SA headers, the SA record tables and the generic table-driven pack/unpack/match. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "emu/mad.h"
#include "emu/pkt.h" /* emu_be*_put/get */

void emu_mad_hdr_put(uint8_t *p, const struct emu_mad_hdr *h)
{
	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	emu_be16_put(p + 4, h->status);
	emu_be16_put(p + 6, h->class_specific);
	emu_be64_put(p + 8, h->tid);
	emu_be16_put(p + 16, h->attr_id);
	emu_be16_put(p + 18, 0);
	emu_be32_put(p + 20, h->attr_mod);
}

void emu_mad_hdr_get(const uint8_t *p, struct emu_mad_hdr *h)
{
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = emu_be16_get(p + 4);
	h->class_specific = emu_be16_get(p + 6);
	h->tid = emu_be64_get(p + 8);
	h->attr_id = emu_be16_get(p + 16);
	h->attr_mod = emu_be32_get(p + 20);
}

void emu_rmpp_hdr_put(uint8_t *p, const struct emu_rmpp_hdr *h)
{
	p[0] = h->version;
	p[1] = h->type;
	p[2] = (uint8_t)((h->resp_time << 3) | (h->flags & 7));
	p[3] = h->status;
	emu_be32_put(p + 4, h->data1);
	emu_be32_put(p + 8, h->data2);
}

void emu_rmpp_hdr_get(const uint8_t *p, struct emu_rmpp_hdr *h)
{
	h->version = p[0];
	h->type = p[1];
	h->resp_time = p[2] >> 3;
	h->flags = p[2] & 7;
	h->status = p[3];
	h->data1 = emu_be32_get(p + 4);
	h->data2 = emu_be32_get(p + 8);
}

void emu_sa_hdr_put(uint8_t *p, const struct emu_sa_hdr *h)
{
	emu_be64_put(p, h->sm_key);
	emu_be16_put(p + 8, h->attr_offset);
	emu_be16_put(p + 10, 0);
	emu_be64_put(p + 12, h->comp_mask);
}

void emu_sa_hdr_get(const uint8_t *p, struct emu_sa_hdr *h)
{
	h->sm_key = emu_be64_get(p);
	h->attr_offset = emu_be16_get(p + 8);
	h->comp_mask = emu_be64_get(p + 12);
}

/* ---- names ---- */

const char *emu_mad_status_name(uint16_t status)
{
	static const char *const sa[] = {
		[EMU_SA_ERR_NO_RESOURCES] = "ERR_NO_RESOURCES",
		[EMU_SA_ERR_REQ_INVALID] = "ERR_REQ_INVALID",
		[EMU_SA_ERR_NO_RECORDS] = "ERR_NO_RECORDS",
		[EMU_SA_ERR_TOO_MANY_RECORDS] = "ERR_TOO_MANY_RECORDS",
		[EMU_SA_ERR_REQ_INVALID_GID] = "ERR_REQ_INVALID_GID",
		[EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS] = "ERR_REQ_INSUFFICIENT_COMPONENTS",
		[EMU_SA_ERR_REQ_DENIED] = "ERR_REQ_DENIED",
		[EMU_SA_ERR_PRIO_SUGGESTED] = "ERR_PRIO_SUGGESTED",
	};
	static const char *const code[8] = { "SUCCESS",	       "BAD_VERSION",
					     "UNSUP_METHOD",   "UNSUP_METHOD_ATTR",
					     "RESERVED_4",     "RESERVED_5",
					     "RESERVED_6",     "INVALID_FIELD" };
	unsigned cls = (status >> 8) & 0x7f;

	if (cls)
		return cls < sizeof(sa) / sizeof(sa[0]) && sa[cls] ? sa[cls] : "ERR_UNKNOWN";
	if ((status >> 2) & 7)
		return code[(status >> 2) & 7];
	if (status & EMU_MAD_STATUS_BUSY)
		return "BUSY";
	if (status & EMU_MAD_STATUS_REDIRECT)
		return "REDIRECT";
	return "SUCCESS";
}

const char *emu_mad_method_name(uint8_t method)
{
	switch (method) {
	case EMU_MAD_METHOD_GET: return "Get";
	case EMU_MAD_METHOD_SET: return "Set";
	case EMU_MAD_METHOD_GET_RESP: return "GetResp";
	case EMU_MAD_METHOD_SEND: return "Send";
	case EMU_MAD_METHOD_TRAP: return "Trap";
	case EMU_MAD_METHOD_REPORT: return "Report";
	case EMU_MAD_METHOD_REPORT_RESP: return "ReportResp";
	case EMU_MAD_METHOD_TRAP_REPRESS: return "TrapRepress";
	case EMU_MAD_METHOD_GET_TABLE: return "GetTable";
	case EMU_MAD_METHOD_GET_TABLE_RESP: return "GetTableResp";
	case EMU_MAD_METHOD_GET_TRACE_TABLE: return "GetTraceTable";
	case EMU_MAD_METHOD_GET_MULTI: return "GetMulti";
	case EMU_MAD_METHOD_DELETE: return "Delete";
	case EMU_MAD_METHOD_DELETE_RESP: return "DeleteResp";
	default: return "Unknown";
	}
}

const char *emu_sa_attr_name(uint16_t attr_id)
{
	static const struct {
		uint16_t id;
		const char *name;
	} t[] = {
		{ EMU_SA_ATTR_CLASS_PORT_INFO, "ClassPortInfo" },
		{ EMU_SA_ATTR_NOTICE, "Notice" },
		{ EMU_SA_ATTR_INFORM_INFO, "InformInfo" },
		{ EMU_SA_ATTR_NODE_RECORD, "NodeRecord" },
		{ EMU_SA_ATTR_PORT_INFO_RECORD, "PortInfoRecord" },
		{ EMU_SA_ATTR_SL2VL_RECORD, "SLtoVLMappingTableRecord" },
		{ EMU_SA_ATTR_SWITCH_INFO_RECORD, "SwitchInfoRecord" },
		{ EMU_SA_ATTR_LFT_RECORD, "LinearForwardingTableRecord" },
		{ EMU_SA_ATTR_LINK_RECORD, "LinkRecord" },
		{ EMU_SA_ATTR_GUID_INFO_RECORD, "GuidInfoRecord" },
		{ EMU_SA_ATTR_SERVICE_RECORD, "ServiceRecord" },
		{ EMU_SA_ATTR_PKEY_TABLE_RECORD, "P_KeyTableRecord" },
		{ EMU_SA_ATTR_PATH_RECORD, "PathRecord" },
		{ EMU_SA_ATTR_VL_ARB_RECORD, "VLArbitrationTableRecord" },
		{ EMU_SA_ATTR_MCMEMBER_RECORD, "MCMemberRecord" },
		{ EMU_SA_ATTR_TRACE_RECORD, "TraceRecord" },
		{ EMU_SA_ATTR_MULTIPATH_RECORD, "MultiPathRecord" },
		{ EMU_SA_ATTR_INFORM_INFO_RECORD, "InformInfoRecord" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].id == attr_id)
			return t[i].name;
	return "Unknown";
}

/* ---- bit fields ---- */

/* A field lies in the bytes first..last; when they fit a 64-bit word (every field of the SA
 * records does but a 64-bit one off a byte boundary) it is shifted out of that word, else it
 * goes bit by bit. Bit 0 is the MSB of byte 0 (IBA order). */
static uint64_t field_mask(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

/* The exported functions are calls through the PLT from inside the library too (the record
 * packers made ~60 of them a connection): the packers use these static copies. */
static inline uint64_t bits_get(const uint8_t *rec, unsigned bit_off, unsigned bits)
{
	unsigned first = bit_off / 8, last = (bit_off + bits - 1) / 8;
	uint64_t v = 0;

	if (!bits)
		return 0;
	if (last - first < 8) {
		/* whole bytes (most record fields) need no shift or mask: tail 0, mask all ones */
		v = emu_be_load_n(rec + first, last - first + 1);
		return (v >> (7 - (bit_off + bits - 1) % 8)) & field_mask(bits);
	}
	for (unsigned i = 0; i < bits; i++) {
		unsigned b = bit_off + i;

		v = (v << 1) | ((rec[b / 8] >> (7 - b % 8)) & 1u);
	}
	return v;
}

static inline void bits_put(uint8_t *rec, unsigned bit_off, unsigned bits, uint64_t v)
{
	unsigned first = bit_off / 8, last = (bit_off + bits - 1) / 8;

	if (!bits)
		return;
	if (!(bit_off % 8) && !(bits % 8) && bits <= 64) {
		/* whole bytes: a big-endian store, no read-modify-write */
		emu_be_store_n(rec + first, last - first + 1, v);
		return;
	}
	if (last - first < 8) {
		unsigned tail = 7 - (bit_off + bits - 1) % 8, n = last - first + 1;
		uint64_t m = field_mask(bits) << tail;
		uint64_t w = emu_be_load_n(rec + first, n);

		emu_be_store_n(rec + first, n, (w & ~m) | ((v << tail) & m));
		return;
	}
	for (unsigned i = 0; i < bits; i++) {
		unsigned b = bit_off + bits - 1 - i;
		uint8_t m = (uint8_t)(1u << (7 - b % 8));

		if ((v >> i) & 1)
			rec[b / 8] |= m;
		else
			rec[b / 8] &= (uint8_t)~m;
	}
}

uint64_t emu_mad_bits_get(const uint8_t *rec, unsigned bit_off, unsigned bits)
{
	return bits_get(rec, bit_off, bits);
}

void emu_mad_bits_put(uint8_t *rec, unsigned bit_off, unsigned bits, uint64_t v)
{
	bits_put(rec, bit_off, bits, v);
}

static uint64_t member_get(const uint8_t *p, unsigned size)
{
	switch (size) {
	case 1: return *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void member_put(uint8_t *p, unsigned size, uint64_t x)
{
	switch (size) {
	case 1: *p = (uint8_t)x; break;
	case 2: { uint16_t v = (uint16_t)x; memcpy(p, &v, 2); break; }
	case 4: { uint32_t v = (uint32_t)x; memcpy(p, &v, 4); break; }
	default: memcpy(p, &x, 8); break;
	}
}

/* ---- compiled record layouts ----
 * pack/unpack walked every row of the table for every record, reserved rows included (a
 * PathRecord: ~70 iterations, ~1.6 k instructions a pack, 3 a connection through the route
 * and the REQ). The table stays the single source; at first use per layout it becomes a list
 * of ops, one per element of each field that has a member: a byte copy, a whole-byte
 * big-endian store/load, or the bits of a word with their mask. */
enum rec_op_kind { REC_BYTES, REC_WHOLE, REC_PART, REC_SLOW };

struct rec_op {
	uint8_t kind;
	uint8_t ssize;	/* member size (UINT), or bytes (BYTES) */
	uint8_t nbytes; /* wire bytes holding the field (WHOLE, PART) */
	uint8_t tail;	/* PART: bits below the field in those bytes */
	uint16_t soff;	/* member offset */
	uint16_t wbyte; /* first wire byte */
	uint16_t bit_off, bits; /* SLOW: the general bit loop */
	uint64_t mask;	/* PART: field mask, unshifted */
};

struct rec_prog {
	const struct emu_mad_record_desc *d;
	struct rec_op *ops;
	unsigned n;
};

#define REC_PROGS_MAX 64
static struct rec_prog progs[REC_PROGS_MAX];
static unsigned nprogs; /* published with a release store after the entry is complete */
static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rec_op compile_op(const struct emu_mad_field *f, unsigned e)
{
	unsigned off = f->bit_off + e * f->bits;
	unsigned first = off / 8, last = (off + f->bits - 1) / 8;
	struct rec_op o = {
		.ssize = f->struct_size,
		.soff = (uint16_t)(f->struct_off + e * f->struct_size),
		.wbyte = (uint16_t)first,
		.bit_off = (uint16_t)off,
		.bits = f->bits,
	};

	if (f->kind == EMU_MF_BYTES) {
		o.kind = REC_BYTES;
		o.ssize = (uint8_t)(f->bits / 8);
	} else if (last - first >= 8) {
		o.kind = REC_SLOW;
	} else {
		o.nbytes = (uint8_t)(last - first + 1);
		o.kind = !(off % 8) && !(f->bits % 8) ? REC_WHOLE : REC_PART;
		o.tail = (uint8_t)(7 - (off + f->bits - 1) % 8);
		o.mask = field_mask(f->bits);
	}
	return o;
}

/* The layout's ops, compiled at first use; NULL without memory (run_ops builds them as it goes). */
static const struct rec_prog *prog_of(const struct emu_mad_record_desc *d)
{
	unsigned n = __atomic_load_n(&nprogs, __ATOMIC_ACQUIRE), k = 0;
	struct rec_prog *p = NULL;

	for (unsigned i = 0; i < n; i++)
		if (progs[i].d == d)
			return &progs[i];
	pthread_mutex_lock(&prog_lock);
	for (unsigned i = 0; i < nprogs; i++)
		if (progs[i].d == d) {
			p = &progs[i];
			goto out;
		}
	if (nprogs == REC_PROGS_MAX)
		goto out;
	for (size_t i = 0; i < d->nfields; i++)
		if (d->fields[i].kind != EMU_MF_RESERVED)
			k += d->fields[i].count;
	p = &progs[nprogs];
	p->ops = malloc((k ? k : 1) * sizeof(*p->ops));
	if (!p->ops) {
		p = NULL;
		goto out;
	}
	k = 0;
	for (size_t i = 0; i < d->nfields; i++)
		for (unsigned e = 0; d->fields[i].kind != EMU_MF_RESERVED && e < d->fields[i].count; e++)
			p->ops[k++] = compile_op(&d->fields[i], e);
	p->n = k;
	p->d = d;
	__atomic_store_n(&nprogs, nprogs + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&prog_lock);
	return p;
}

static inline __attribute__((always_inline)) void pack_op(const struct rec_op *o,
							 const uint8_t *sp, uint8_t *wire)
{
	uint8_t *w = wire + o->wbyte;
	uint64_t v;

	if (o->kind == REC_BYTES) {
		memcpy(w, sp + o->soff, o->ssize);
		return;
	}
	v = member_get(sp + o->soff, o->ssize);
	if (o->kind == REC_WHOLE) {
		emu_be_store_n(w, o->nbytes, v);
	} else if (o->kind == REC_PART) {
		uint64_t m = o->mask << o->tail;

		emu_be_store_n(w, o->nbytes, (emu_be_load_n(w, o->nbytes) & ~m) | ((v << o->tail) & m));
	} else {
		bits_put(wire, o->bit_off, o->bits, v);
	}
}

static inline __attribute__((always_inline)) void unpack_op(const struct rec_op *o,
							   const uint8_t *wire, uint8_t *sp)
{
	const uint8_t *w = wire + o->wbyte;

	if (o->kind == REC_BYTES)
		memcpy(sp + o->soff, w, o->ssize);
	else if (o->kind == REC_WHOLE)
		member_put(sp + o->soff, o->ssize, emu_be_load_n(w, o->nbytes));
	else if (o->kind == REC_PART)
		member_put(sp + o->soff, o->ssize, (emu_be_load_n(w, o->nbytes) >> o->tail) & o->mask);
	else
		member_put(sp + o->soff, o->ssize, bits_get(wire, o->bit_off, o->bits));
}

/* Runs fn on every op of d: the compiled list, or (no memory for it) each op built as the
 * table is walked. Inlined at both callers, so fn is a direct (inlined) call there. */
static inline __attribute__((always_inline)) void
run_ops(const struct emu_mad_record_desc *d, const uint8_t *in, uint8_t *out,
		    void (*fn)(const struct rec_op *, const uint8_t *, uint8_t *))
{
	const struct rec_prog *p = prog_of(d);

	if (p) {
		for (unsigned i = 0; i < p->n; i++)
			fn(&p->ops[i], in, out);
		return;
	}
	for (size_t i = 0; i < d->nfields; i++)
		for (unsigned e = 0; d->fields[i].kind != EMU_MF_RESERVED && e < d->fields[i].count;
		     e++) {
			struct rec_op o = compile_op(&d->fields[i], e);

			fn(&o, in, out);
		}
}

void emu_mad_record_pack(const struct emu_mad_record_desc *d, const void *s, uint8_t *wire)
{
	memset(wire, 0, d->wire_len);
	run_ops(d, s, wire, pack_op);
}

void emu_mad_record_unpack(const struct emu_mad_record_desc *d, const uint8_t *wire, void *s)
{
	memset(s, 0, d->struct_size);
	run_ops(d, wire, s, unpack_op);
}

static bool bits_equal(const uint8_t *a, const uint8_t *b, unsigned off, unsigned bits)
{
	if (off % 8 == 0 && bits % 8 == 0)
		return !memcmp(a + off / 8, b + off / 8, bits / 8);
	return bits_get(a, off, bits) == bits_get(b, off, bits);
}

bool emu_mad_record_match(const struct emu_mad_record_desc *d, const uint8_t *query,
			  const uint8_t *rec, uint64_t mask, uint64_t skip)
{
	mask &= ~skip;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct emu_mad_field *f = &d->fields[i];

		if (f->comp_bit == EMU_MF_NO_COMP)
			continue;
		for (unsigned e = 0; e < f->count; e++) {
			unsigned bit = (unsigned)f->comp_bit + e * f->comp_span;
			uint64_t sel = ((1ull << f->comp_span) - 1) << bit;

			if ((mask & sel) &&
			    !bits_equal(query, rec, f->bit_off + e * f->bits, f->bits))
				return false;
		}
	}
	return true;
}

const struct emu_mad_field *emu_mad_field_find(const struct emu_mad_record_desc *d,
					       const char *name)
{
	for (size_t i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return &d->fields[i];
	return NULL;
}

/* ---- the tables ---- */

#define FLD(type, member, bitoff, nbits, comp)                                               \
	{ .name = #member, .kind = EMU_MF_UINT, .bit_off = (bitoff), .bits = (nbits),        \
	  .count = 1, .comp_bit = (comp), .comp_span = 1,                                    \
	  .struct_off = offsetof(type, member), .struct_size = sizeof(((type *)0)->member) }
#define BYTES(type, member, bitoff, nbits, comp)                                             \
	{ .name = #member, .kind = EMU_MF_BYTES, .bit_off = (bitoff), .bits = (nbits),       \
	  .count = 1, .comp_bit = (comp), .comp_span = 1,                                    \
	  .struct_off = offsetof(type, member), .struct_size = sizeof(((type *)0)->member) }
#define ARRAY(type, member, bitoff, nbits, n, comp)                                          \
	{ .name = #member, .kind = EMU_MF_UINT, .bit_off = (bitoff), .bits = (nbits),        \
	  .count = (n), .comp_bit = (comp), .comp_span = 1,                                  \
	  .struct_off = offsetof(type, member),                                              \
	  .struct_size = sizeof(((type *)0)->member[0]) }
#define RSV(bitoff, nbits, comp)                                                             \
	{ .name = "reserved", .kind = EMU_MF_RESERVED, .bit_off = (bitoff), .bits = (nbits), \
	  .count = 1, .comp_bit = (comp), .comp_span = 1 }

#define PR struct emu_sa_path_rec
/* Table 206. ServiceID is one 64-bit field selected by either of mask bits 0 (ServiceID8MSB)
 * and 1 (ServiceID56LSB): a query gives both in practice (the CM sets both). */
static const struct emu_mad_field path_rec_fields[] = {
	{ .name = "service_id", .kind = EMU_MF_UINT, .bit_off = 0, .bits = 64, .count = 1,
	  .comp_bit = 0, .comp_span = 2, .struct_off = offsetof(PR, service_id),
	  .struct_size = 8 },
	BYTES(PR, dgid, 64, 128, 2),
	BYTES(PR, sgid, 192, 128, 3),
	FLD(PR, dlid, 320, 16, 4),
	FLD(PR, slid, 336, 16, 5),
	FLD(PR, raw_traffic, 352, 1, 6),
	RSV(353, 3, 7),
	FLD(PR, flow_label, 356, 20, 8),
	FLD(PR, hop_limit, 376, 8, 9),
	FLD(PR, traffic_class, 384, 8, 10),
	FLD(PR, reversible, 392, 1, 11),
	FLD(PR, numb_path, 393, 7, 12),
	FLD(PR, pkey, 400, 16, 13),
	FLD(PR, qos_class, 416, 12, 14),
	FLD(PR, sl, 428, 4, 15),
	FLD(PR, mtu_selector, 432, 2, 16),
	FLD(PR, mtu, 434, 6, 17),
	FLD(PR, rate_selector, 440, 2, 18),
	FLD(PR, rate, 442, 6, 19),
	FLD(PR, packet_life_time_selector, 448, 2, 20),
	FLD(PR, packet_life_time, 450, 6, 21),
	FLD(PR, preference, 456, 8, 22),
	RSV(464, 48, EMU_MF_NO_COMP),
};
#undef PR

#define MC struct emu_sa_mcmember_rec
static const struct emu_mad_field mcmember_rec_fields[] = {
	BYTES(MC, mgid, 0, 128, 0),
	BYTES(MC, port_gid, 128, 128, 1),
	FLD(MC, qkey, 256, 32, 2),
	FLD(MC, mlid, 288, 16, 3),
	FLD(MC, mtu_selector, 304, 2, 4),
	FLD(MC, mtu, 306, 6, 5),
	FLD(MC, traffic_class, 312, 8, 6),
	FLD(MC, pkey, 320, 16, 7),
	FLD(MC, rate_selector, 336, 2, 8),
	FLD(MC, rate, 338, 6, 9),
	FLD(MC, packet_life_time_selector, 344, 2, 10),
	FLD(MC, packet_life_time, 346, 6, 11),
	FLD(MC, sl, 352, 4, 12),
	FLD(MC, flow_label, 356, 20, 13),
	FLD(MC, hop_limit, 376, 8, 14),
	FLD(MC, scope, 384, 4, 15),
	FLD(MC, join_state, 388, 4, 16),
	FLD(MC, proxy_join, 392, 1, 17),
	RSV(393, 23, EMU_MF_NO_COMP),
};
#undef MC

#define SR struct emu_sa_service_rec
static const struct emu_mad_field service_rec_fields[] = {
	FLD(SR, id, 0, 64, 0),
	BYTES(SR, gid, 64, 128, 1),
	FLD(SR, pkey, 192, 16, 2),
	RSV(208, 16, 3),
	FLD(SR, lease, 224, 32, 4),
	BYTES(SR, key, 256, 128, 5),
	BYTES(SR, name, 384, 512, 6),
	ARRAY(SR, data8, 896, 8, 16, 7),
	ARRAY(SR, data16, 1024, 16, 8, 23),
	ARRAY(SR, data32, 1152, 32, 4, 31),
	ARRAY(SR, data64, 1280, 64, 2, 35),
};
#undef SR

#define N(a) (sizeof(a) / sizeof((a)[0]))
const struct emu_mad_record_desc emu_sa_path_rec_desc = {
	"PathRecord", EMU_SA_ATTR_PATH_RECORD, 64, 8, sizeof(struct emu_sa_path_rec),
	path_rec_fields, N(path_rec_fields)
};
const struct emu_mad_record_desc emu_sa_mcmember_rec_desc = {
	"MCMemberRecord", EMU_SA_ATTR_MCMEMBER_RECORD, 52, 7, sizeof(struct emu_sa_mcmember_rec),
	mcmember_rec_fields, N(mcmember_rec_fields)
};
const struct emu_mad_record_desc emu_sa_service_rec_desc = {
	"ServiceRecord", EMU_SA_ATTR_SERVICE_RECORD, 176, 22, sizeof(struct emu_sa_service_rec),
	service_rec_fields, N(service_rec_fields)
};

const struct emu_mad_record_desc *emu_sa_record_desc(uint16_t attr_id)
{
	switch (attr_id) {
	case EMU_SA_ATTR_PATH_RECORD: return &emu_sa_path_rec_desc;
	case EMU_SA_ATTR_MCMEMBER_RECORD: return &emu_sa_mcmember_rec_desc;
	case EMU_SA_ATTR_SERVICE_RECORD: return &emu_sa_service_rec_desc;
	default: return NULL;
	}
}

/* ---- rates ---- */

/* Nominal data rates of the IBTA rate codes (table 205 and its extensions, as ibv_rate). */
static const unsigned rate_mbps[] = {
	[2] = 2500,    [3] = 10000,   [4] = 30000,   [5] = 5000,    [6] = 20000,
	[7] = 40000,   [8] = 60000,   [9] = 80000,   [10] = 120000, [11] = 14000,
	[12] = 56000,  [13] = 112000, [14] = 168000, [15] = 25000,  [16] = 100000,
	[17] = 200000, [18] = 300000, [19] = 28000,  [20] = 50000,  [21] = 400000,
	[22] = 600000,
};

unsigned emu_sa_rate_mbps(uint8_t rate)
{
	return rate < N(rate_mbps) ? rate_mbps[rate] : 0;
}

uint8_t emu_sa_rate_from_mbps(unsigned mbps)
{
	uint8_t best = 0;

	for (uint8_t r = 0; r < N(rate_mbps); r++)
		if (rate_mbps[r] && rate_mbps[r] <= mbps &&
		    (!best || rate_mbps[r] > rate_mbps[best]))
			best = r;
	return best;
}
