/* The frames of the packet path (emu/verbs/net.c): a looped-back frame lives from its build
 * until the zero-delay timer that delivers it fires, and a whole message's frames are built
 * before the first one is delivered (1024 of them for 1 MiB at path MTU 1024). Taking each
 * from malloc grew and trimmed the heap once a message (page faults, clearing, brk), so
 * frames come from free lists by size (128-byte classes up to 9 KiB: a path MTU 4096
 * packet with every header fits; a 1 KiB packet's frame wastes little of its class, which
 * keeps a message's frames in fewer cache lines), most recently freed first, and go back to
 * them once delivered. What the lists keep is bounded (FRAME_CACHE_MAX bytes: the frames of
 * a 16 MiB message at MTU 1024 fit); larger frames, and frames beyond that bound, are malloc'd
 * and freed as before. Engine lock held: every
 * caller runs inside the data path (emu/verbs/datapath.h). */
#include "config.h"

#include <stdlib.h>

#include "emu/verbs/datapath.h"
#include "util/failcall.h"

#define FRAME_CLASS 128u
#define FRAME_CLASSES 72u		  /* capacities 128 .. 9216 bytes */
#define FRAME_CACHE_MAX (32u << 20) /* bytes the free lists may keep */

static struct emu_dp_frame *free_list[FRAME_CLASSES];
static size_t cached_bytes;

struct emu_dp_frame *emu_dp_frame_get(size_t len)
{
	size_t c = (len + FRAME_CLASS - 1) / FRAME_CLASS;
	struct emu_dp_frame *f;

	if (c == 0)
		c = 1;
	if (c <= FRAME_CLASSES && (f = free_list[c - 1])) {
		free_list[c - 1] = f->next;
		cached_bytes -= f->cap;
		return f;
	}
	if (c > FRAME_CLASSES) {
		f = emu_malloc(sizeof(*f) + len);
		if (f)
			f->cap = 0; /* not for the lists */
		return f;
	}
	f = emu_malloc(sizeof(*f) + c * FRAME_CLASS);
	if (f)
		f->cap = c * FRAME_CLASS;
	return f;
}

void emu_dp_frame_put(struct emu_dp_frame *f)
{
	size_t c;

	if (!f)
		return;
	c = f->cap / FRAME_CLASS;
	if (!c || cached_bytes + f->cap > FRAME_CACHE_MAX) {
		free(f);
		return;
	}
	f->next = free_list[c - 1];
	free_list[c - 1] = f;
	cached_bytes += f->cap;
}
