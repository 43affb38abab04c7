/* pcap tap on libpcap's "dead" handles: pcap_open_dead gives a handle with a link type and
 * precision but no capture device, which is all pcap_dump needs.
 *
 * A file the tap opens is written through a stdio buffer of PCAP_BUF bytes: with the stream's
 * default (st_blksize, 4 KiB) a link carrying 1 KiB frames made a write() every three or four
 * frames. */
#include "emu/sim/pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcap/pcap.h>

#include "emu/sim/clock.h"
#include "util/failcall.h"

#define PCAP_BUF (256u << 10)

struct emu_pcap {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	int link_layer;
	uint64_t frames;
	char *buf; /* the stream's buffer, for a file opened here; freed after the stream */
};

static int link_layer_dlt(int link_layer)
{
	switch (link_layer) {
	case EMU_LL_ETHERNET:
		return DLT_EN10MB;
	case EMU_LL_INFINIBAND:
		return DLT_INFINIBAND;
	default:
		return -1;
	}
}

static struct emu_pcap *pcap_new(int link_layer, int dlt)
{
	struct emu_pcap *p;

	if (link_layer_dlt(link_layer) < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (dlt < 0)
		dlt = link_layer_dlt(link_layer);
	if (dlt > 0xffff) {
		errno = EINVAL;
		return NULL;
	}
	p = emu_calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->link_layer = link_layer;
	p->dead = pcap_open_dead_with_tstamp_precision(dlt, EMU_PCAP_SNAPLEN,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!p->dead) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void pcap_free(struct emu_pcap *p)
{
	pcap_close(p->dead);
	free(p->buf);
	free(p);
}

struct emu_pcap *emu_pcap_open(const char *path, int link_layer)
{
	return emu_pcap_open_dlt(path, link_layer, -1);
}

struct emu_pcap *emu_pcap_open_dlt(const char *path, int link_layer, int dlt)
{
	struct emu_pcap *p;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	FILE *f;

	p = pcap_new(link_layer, dlt);
	if (!p)
		return NULL;
	/* a DLT libpcap cannot write (no LINKTYPE for it) is refused without touching path: a
	 * dry run on /dev/null, which fails without an errno then */
	if (dlt >= 0) {
		errno = 0;
		p->dumper = pcap_dump_open(p->dead, "/dev/null");
		if (!p->dumper) {
			err = errno ? errno : EINVAL;
			pcap_free(p);
			errno = err;
			return NULL;
		}
		pcap_dump_close(p->dumper);
		p->dumper = NULL;
	}
	p->buf = emu_malloc(PCAP_BUF);
	f = p->buf ? fopen(path, "wb") : NULL;
	if (!f) {
		err = errno ? errno : ENOMEM;
		pcap_free(p);
		errno = err;
		return NULL;
	}
	setvbuf(f, p->buf, _IOFBF, PCAP_BUF);
	errno = 0;
	p->dumper = pcap_dump_fopen(p->dead, f);
	if (!p->dumper) {
		/* the file header's write failed, and libpcap has closed f on that path */
		err = errno ? errno : EIO;
		pcap_free(p);
		errno = err;
		return NULL;
	}
	return p;
}

struct emu_pcap *emu_pcap_open_stream(FILE *f, int link_layer)
{
	struct emu_pcap *p;
	int err;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	p = pcap_new(link_layer, -1);
	if (!p) {
		err = errno;
		fclose(f);
		errno = err;
		return NULL;
	}
	errno = 0;
	p->dumper = pcap_dump_fopen(p->dead, f);
	if (!p->dumper) {
		/* The link type is valid, so the failure was writing the file header, and on
		 * that path libpcap has already closed f. */
		err = errno ? errno : EIO;
		pcap_free(p);
		errno = err;
		return NULL;
	}
	return p;
}

int emu_pcap_write(struct emu_pcap *p, uint64_t now_ns, const void *frame, size_t len)
{
	struct pcap_pkthdr h;

	if (!p || (!frame && len) || len > UINT32_MAX)
		return -EINVAL;
	/* With a nanosecond-precision handle pcap_dump writes tv_usec verbatim as the
	 * nanosecond field. The seconds field is 32 bits in the file: virtual time wraps after
	 * 136 years, which no run reaches. */
	h.ts.tv_sec = (time_t)(now_ns / EMU_NSEC_PER_SEC);
	h.ts.tv_usec = (suseconds_t)(now_ns % EMU_NSEC_PER_SEC);
	h.len = (bpf_u_int32)len;
	h.caplen = len > EMU_PCAP_SNAPLEN ? EMU_PCAP_SNAPLEN : (bpf_u_int32)len;
	pcap_dump((u_char *)p->dumper, &h, frame);
	p->frames++;
	return 0;
}

int emu_pcap_flush(struct emu_pcap *p)
{
	if (!p)
		return -EINVAL;
	errno = 0;
	if (pcap_dump_flush(p->dumper) != 0 || ferror(pcap_dump_file(p->dumper)))
		return errno ? -errno : -EIO;
	return 0;
}

int emu_pcap_close(struct emu_pcap *p)
{
	int ret;

	if (!p)
		return 0;
	ret = emu_pcap_flush(p);
	/* pcap_dump_close reports nothing; a failing fclose (e.g. ENOSPC on the final write)
	 * would go unseen, which is why everything is flushed and checked first. */
	pcap_dump_close(p->dumper);
	pcap_free(p);
	return ret;
}

int emu_pcap_link_layer(const struct emu_pcap *p)
{
	return p->link_layer;
}

uint64_t emu_pcap_frames(const struct emu_pcap *p)
{
	return p->frames;
}
