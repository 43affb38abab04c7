/* Frames this thread built, remembered so that parsing one of them again skips its CRCs.
 *
 * Every packet's ICRC (and on IB its VCRC) is computed when it is built and again when it is
 * received: in one process both ends are ours, so a CM connection paid two CRC-32 passes
 * over each of its ~330-byte MAD frames. A frame that arrives byte for byte as this thread
 * built it carries the CRCs the builder computed over exactly these bytes, so the receive
 * check cannot fail and is skipped. Anything else -- a frame a switch or router rewrote, a
 * test's hand-made or corrupted frame, one built on another thread, one pushed out of the
 * cache -- is checked as before: the answers (and the bytes on the wire, and what a capture
 * holds) are unchanged; only the repeated work goes.
 *
 * The cache is per thread (no lock; the engine runs a frame's delivery on the thread that
 * sent it unless virtual time moves on the progress thread, which then simply misses), direct
 * mapped on the frame's last four bytes (CRC bytes: well spread) and its length, holding
 * frames up to EMU_PKT_KNOWN_MAX bytes (GSI MADs and small data packets).
 *
 * A thread can also declare the frames it delivers for a while as built by this program's
 * builder and never altered since (emu_pkt_trust): the shared-memory rings between the
 * processes of one host (emu/link/link_shm.c) carry only loopback frames, which no wire, fault or
 * switch touches, written by emu_pkt_build in the peer process. Their ICRC check cannot fail
 * either, and it was a quarter of a receiving process's time at 64 KiB messages. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "util/failcall.h"

#define KNOWN_SLOTS 64

struct known_frames {
	uint16_t len[KNOWN_SLOTS];
	uint8_t bytes[KNOWN_SLOTS][EMU_PKT_KNOWN_MAX];
};

static pthread_key_t known_key;
static pthread_once_t known_once = PTHREAD_ONCE_INIT;
static bool known_key_ok;

static void known_init(void)
{
	known_key_ok = pthread_key_create(&known_key, free) == 0;
}

static struct known_frames *known_get(bool create)
{
	struct known_frames *k;

	pthread_once(&known_once, known_init);
	if (!known_key_ok)
		return NULL;
	k = pthread_getspecific(known_key);
	if (!k && create) {
		k = emu_calloc(1, sizeof(*k));
		if (k && pthread_setspecific(known_key, k)) {
			free(k);
			k = NULL;
		}
	}
	return k;
}

static size_t known_slot(const uint8_t *frame, size_t len)
{
	uint32_t tail = (uint32_t)frame[len - 4] | (uint32_t)frame[len - 3] << 8 |
			(uint32_t)frame[len - 2] << 16 | (uint32_t)frame[len - 1] << 24;

	return (size_t)((tail ^ (uint32_t)len) * 2654435761u >> 26) % KNOWN_SLOTS;
}

void emu_pkt_known_note(const uint8_t *frame, size_t len)
{
	struct known_frames *k;
	size_t s;

	if (len < 4 || len > EMU_PKT_KNOWN_MAX)
		return;
	k = known_get(true);
	if (!k)
		return;
	s = known_slot(frame, len);
	k->len[s] = (uint16_t)len;
	memcpy(k->bytes[s], frame, len);
}

static __thread bool known_trusted;

void emu_pkt_trust(bool on)
{
	known_trusted = on;
}

bool emu_pkt_known(const uint8_t *frame, size_t len)
{
	struct known_frames *k;
	size_t s;

	if (known_trusted)
		return true;
	if (len < 4 || len > EMU_PKT_KNOWN_MAX)
		return false;
	k = known_get(false);
	if (!k)
		return false;
	s = known_slot(frame, len);
	return k->len[s] == len && !memcmp(k->bytes[s], frame, len);
}
