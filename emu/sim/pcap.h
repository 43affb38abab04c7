/* The pcap tap: writes the frames the wire carries to a classic pcap file, for Wireshark/tshark.
 *
 * Classic pcap has one link type per file, so one emu_pcap is one file of one link layer:
 * Ethernet (DLT_EN10MB: RoCEv2 frames from the Ethernet header) or InfiniBand
 * (DLT_INFINIBAND = LINKTYPE_INFINIBAND = 247: IB packets from the LRH).
 *
 * Timestamps are the emulator's virtual time at nanosecond precision (the nanosecond pcap magic
 * 0xa1b23c4d, written by libpcap when the capture handle has nanosecond precision), so no
 * sub-microsecond ordering is lost. The file holds nothing but the frames and their virtual
 * times: no wall time, pid or host name, so the same seed and traffic give the same bytes.
 */
#ifndef RDMAEMU_EMU_PCAP_H
#define RDMAEMU_EMU_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Link layers, numbered as verbs numbers them (IBV_LINK_LAYER_INFINIBAND/_ETHERNET), so that a
 * port's link_layer field can be passed unchanged. */
#define EMU_LL_INFINIBAND 1
#define EMU_LL_ETHERNET 2

/* Snap length written in the file header: every frame the wire accepts fits. */
#define EMU_PCAP_SNAPLEN 65535

struct emu_pcap;

/* Creates (truncates) `path`. NULL with errno set on failure (EINVAL for an unknown link
 * layer). */
struct emu_pcap *emu_pcap_open(const char *path, int link_layer);
/* Same, writing `dlt` as the file's link type instead of the standard one (dlt < 0 keeps it).
 * For Wireshark, which (4.0 at least) cannot open LINKTYPE_INFINIBAND files at all: write IB
 * with DLT_USER0 (147) and map it to the "infiniband" dissector (user_dlts table, e.g.
 * tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'). The frames are the
 * same bytes. EINVAL for a DLT that has no pcap LINKTYPE. */
struct emu_pcap *emu_pcap_open_dlt(const char *path, int link_layer, int dlt);
/* Same as emu_pcap_open, on an open stream (e.g. open_memstream); the stream is closed by emu_pcap_close, and
 * is also closed when this fails. */
struct emu_pcap *emu_pcap_open_stream(FILE *f, int link_layer);

/* Appends one frame stamped with virtual time now_ns. Frames longer than the snap length are
 * truncated in the file (their original length is kept). Returns 0 or -EINVAL. */
int emu_pcap_write(struct emu_pcap *p, uint64_t now_ns, const void *frame, size_t len);
/* Writes buffered frames to the file: 0, or -errno of the write error. */
int emu_pcap_flush(struct emu_pcap *p);
/* A pause in the traffic (the engine ran what was due): the buffered frames go to the file
 * when at least EMU_PCAP_IDLE_BYTES of them are waiting, so a quiet capture lags behind by
 * less than that, as with the 4 KiB stream buffer a capture file used to have; under load the
 * tap writes 256 KiB at a time. NULL is a no-op. */
#define EMU_PCAP_IDLE_BYTES 4096
void emu_pcap_idle(struct emu_pcap *p);
/* Flushes, closes and frees; 0 or -errno if any write failed. NULL is a no-op. */
int emu_pcap_close(struct emu_pcap *p);

int emu_pcap_link_layer(const struct emu_pcap *p);
uint64_t emu_pcap_frames(const struct emu_pcap *p);

#endif
