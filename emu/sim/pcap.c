/* pcap tap on libpcap's "dead" handles: pcap_open_dead gives a handle with a link type and
 * precision but no capture device, which is all pcap_dump needs.
 *
 * Records (the 16-byte header pcap_dump writes, then the bytes) are gathered in a buffer of
 * PCAP_BUF bytes of the tap's own and handed to the stream a buffer at a time, which for a
 * file opened here is unbuffered: pcap_dump made two locked fwrite calls a frame into the
 * stream's 4 KiB (st_blksize) buffer, a write() every three or four 1 KiB frames. The bytes
 * are pcap_dump's. A pause in the traffic (emu_pcap_idle, when the engine has run what was
 * due) writes them out once 4 KiB are waiting, so a file lags behind a quiet wire no more
 * than it did with the stream's buffer. */
#include "emu/sim/pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "emu/sim/clock.h"
#include "util/failcall.h"

#define PCAP_BUF (256u << 10)
_Static_assert(PCAP_BUF >= 16 + EMU_PCAP_SNAPLEN, "a record of the longest capture fits");

struct emu_pcap {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	int link_layer;
	uint64_t frames;
	uint8_t *rec; /* PCAP_BUF bytes of records not yet handed to the stream */
	size_t nrec;
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
	p->rec = emu_malloc(PCAP_BUF);
	if (!p->rec) {
		free(p);
		return NULL;
	}
	p->link_layer = link_layer;
	p->dead = pcap_open_dead_with_tstamp_precision(dlt, EMU_PCAP_SNAPLEN,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!p->dead) {
		free(p->rec);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void pcap_free(struct emu_pcap *p)
{
	pcap_close(p->dead);
	free(p->rec);
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
	f = fopen(path, "wb");
	if (!f) {
		err = errno;
		pcap_free(p);
		errno = err;
		return NULL;
	}
	setvbuf(f, NULL, _IONBF, 0); /* the records come in PCAP_BUF pieces */
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

/* The buffered records to the stream (a write error shows in its error flag). */
static void rec_out(struct emu_pcap *p)
{
	if (p->nrec)
		fwrite(p->rec, 1, p->nrec, pcap_dump_file(p->dumper));
	p->nrec = 0;
}

int emu_pcap_write(struct emu_pcap *p, uint64_t now_ns, const void *frame, size_t len)
{
	uint32_t h[4];
	size_t caplen;

	if (!p || (!frame && len) || len > UINT32_MAX)
		return -EINVAL;
	/* pcap_dump's record header (struct pcap_sf_pkthdr, host order): seconds, then with a
	 * nanosecond-precision handle the nanoseconds, captured and original length. The seconds
	 * field is 32 bits in the file: virtual time wraps after 136 years, which no run
	 * reaches. */
	caplen = len > EMU_PCAP_SNAPLEN ? EMU_PCAP_SNAPLEN : len;
	h[0] = (uint32_t)(now_ns / EMU_NSEC_PER_SEC);
	h[1] = (uint32_t)(now_ns % EMU_NSEC_PER_SEC);
	h[2] = (uint32_t)caplen;
	h[3] = (uint32_t)len;
	if (p->nrec + sizeof(h) + caplen > PCAP_BUF)
		rec_out(p);
	memcpy(p->rec + p->nrec, h, sizeof(h));
	if (caplen)
		memcpy(p->rec + p->nrec + sizeof(h), frame, caplen);
	p->nrec += sizeof(h) + caplen;
	p->frames++;
	return 0;
}

void emu_pcap_idle(struct emu_pcap *p)
{
	if (p && p->nrec >= EMU_PCAP_IDLE_BYTES)
		rec_out(p);
}

int emu_pcap_flush(struct emu_pcap *p)
{
	if (!p)
		return -EINVAL;
	rec_out(p);
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
