/* For the neighbour tests (cmocka): a capture of everything the wire carries, read back from
 * memory, link delays, entry states. */
#ifndef RDMAEMU_NEIGH_CAP_H
#define RDMAEMU_NEIGH_CAP_H

#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"
#include "neigh_test.h"

/* ---------- a capture of everything sent, read back from memory ---------- */

struct cap {
	char *buf;
	size_t size;
	struct emu_pcap *pcap;
	int ll;
};

struct frame {
	uint64_t t;
	size_t len;
	const uint8_t *b;
};

static inline void cap_start(struct emu_engine *e, struct cap *c, int ll)
{
	FILE *f;

	memset(c, 0, sizeof(*c));
	c->ll = ll;
	f = open_memstream(&c->buf, &c->size);
	assert_non_null(f);
	c->pcap = emu_pcap_open_stream(f, ll);
	assert_non_null(c->pcap);
	assert_int_equal(emu_wire_set_tap(emu_topology_wire(emu_engine_topology(e)), ll, c->pcap), 0);
}

/* Frame i of the capture (pcap records after the 24-byte file header). false past the end. */
static inline bool cap_frame(struct cap *c, size_t i, struct frame *out)
{
	size_t off = 24;
	uint32_t magic;

	memset(out, 0, sizeof(*out));
	assert_int_equal(emu_pcap_flush(c->pcap), 0);
	assert_true(c->size >= 24);
	memcpy(&magic, c->buf, 4);
	while (off + 16 <= c->size) {
		uint32_t sec, frac, incl;

		memcpy(&sec, c->buf + off, 4);
		memcpy(&frac, c->buf + off + 4, 4);
		memcpy(&incl, c->buf + off + 8, 4);
		if (!i--) {
			out->t = (uint64_t)sec * SEC + (magic == 0xa1b23c4d ? frac : frac * 1000ull);
			out->len = incl;
			out->b = (const uint8_t *)c->buf + off + 16;
			return true;
		}
		off += 16 + incl;
	}
	return false;
}

static inline size_t cap_count(struct cap *c)
{
	struct frame f;
	size_t n = 0;

	while (cap_frame(c, n, &f))
		n++;
	return n;
}

static inline void cap_stop(struct emu_engine *e, struct cap *c)
{
	emu_wire_set_tap(emu_topology_wire(emu_engine_topology(e)), c->ll, NULL);
	emu_pcap_close(c->pcap);
	free(c->buf);
}

static inline void assert_frame(struct cap *c, size_t i, uint64_t t, const uint8_t *want, size_t len)
{
	struct frame f;

	assert_true(cap_frame(c, i, &f));
	assert_int_equal(f.t, t);
	assert_int_equal(f.len, len);
	assert_memory_equal(f.b, want, len);
}

static inline void set_delay(struct emu_engine *e, int link, uint64_t ns)
{
	struct emu_wire *w = emu_topology_wire(emu_engine_topology(e));
	struct emu_faults fl;

	assert_int_equal(emu_wire_get_faults(w, link, &fl), 0);
	fl.delay_ns = ns;
	assert_int_equal(emu_wire_set_faults(w, link, &fl), 0);
}

/* The entry's state, -1 when there is none. */
static inline int state_of(struct emu_engine *e, size_t host, int nd, const char *a, unsigned scope)
{
	struct sockaddr_storage s = nt_sa(a, scope);
	enum emu_nud st;

	if (emu_neigh_lookup(e, host, nd, (struct sockaddr *)&s, &st, NULL, NULL))
		return -1;
	return (int)st;
}

#endif
