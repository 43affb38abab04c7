/* The shared page of an rdma_cm file's connection (protocol 9..12, docs/daemon.md "rdma_cm
 * files"): a memfd the daemon creates at UCMA_OPEN and passes with its answer, mapped by both.
 *
 * - sent (protocol 9): the messages the daemon has sent on the connection since, each counted
 *   right before its sendmsg / sendmmsg. A client that has read as many finds nothing there.
 * - The command ring (protocol 11): everything the client says after UCMA_OPEN (UCMA_WRITE,
 *   UCMA_POST, UCMA_CONSUMED, UCMA_CLOSE) is a record here instead of a message on the
 *   socket. One writer (the client, under its send lock), one reader (the daemon's main
 *   loop). The daemon keeps `awake` set while it is sure to look at the ring again before
 *   it sleeps; a client that publishes a record and finds it clear rings the doorbell, a
 *   header-only UCMA_RING message on the socket. A busy daemon costs the client no system
 *   call a command (it was a sendmsg each, and a recvmsg each in the daemon).
 *
 * A record is struct emu_ducma_rec and its body, padded to 16 bytes, never split at the end of
 * the ring: a record of type EMU_DUCMA_REC_WRAP fills the rest and the next starts at 0. head
 * and tail count bytes since the start (they never wrap back). The daemon checks everything
 * it reads (head within a ring of tail, sizes, types) and copies a record's body out before
 * it acts on it: a broken client is closed, never trusted. */
#ifndef RDMAEMU_DAEMON_UCMA_RING_H
#define RDMAEMU_DAEMON_UCMA_RING_H

#include <stdint.h>

#define EMU_DUCMA_RING_OFF 4096u	  /* the ring's first byte in the page */
#define EMU_DUCMA_RING_LEN (256u * 1024u) /* a power of 2 */
#define EMU_DUCMA_PAGE_LEN (EMU_DUCMA_RING_OFF + EMU_DUCMA_RING_LEN)
#define EMU_DUCMA_REC_ALIGN 16u
#define EMU_DUCMA_REC_WRAP 0xffffu /* the rest of the ring is a gap */
#define EMU_DUCMA_REC_MAX 4096u	   /* largest body (a UCMA_WRITE with its option: ~2 KiB) */
/* Protocol 12: the largest body of a UCMA_BUNDLE (emu/link/proto.h), whose records have
 * the command ring's form. The daemon's messages on the file's connection are the answers and
 * pushed events (~0.3-2.5 KiB each with their kept answers), 64 KiB can hold dozens. */
#define EMU_DUCMA_BUNDLE_MAX (64u * 1024u)

struct emu_ducma_shared {
	uint64_t sent; /* daemon: messages sent on the socket */
	uint8_t pad0[56];
	uint64_t head; /* client: bytes put into the ring */
	uint8_t pad1[56];
	uint64_t tail; /* daemon: bytes taken out of it */
	uint8_t pad2[56];
	uint32_t awake; /* daemon: 1 while it will look at the ring before it sleeps */
};

struct emu_ducma_rec {
	uint32_t len;  /* of the body */
	uint16_t type; /* enum emu_dmsg_type, or EMU_DUCMA_REC_WRAP */
	uint16_t seq16; /* the command ring: the low bits of the process's message count
			 * (emu_link_count_sent), by which a daemon in virtual time puts a
			 * process's records and frames in their order; 0 in a bundle */
	uint32_t arg, pad; /* as the message's header */
};

static inline uint32_t emu_ducma_rec_size(uint32_t len)
{
	return (uint32_t)((sizeof(struct emu_ducma_rec) + len + EMU_DUCMA_REC_ALIGN - 1) &
			  ~(EMU_DUCMA_REC_ALIGN - 1));
}

#endif
