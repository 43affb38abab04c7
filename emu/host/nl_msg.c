/* Building netlink messages in the kernel's layout (nl_msg.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/host/nl_msg.h"

#define ALIGN4(n) (((n) + 3u) & ~(size_t)3u)

void nlb_init(struct nlb *b)
{
	memset(b, 0, sizeof(*b));
}

void nlb_free(struct nlb *b)
{
	free(b->buf);
	nlb_init(b);
}

static unsigned char *grow(struct nlb *b, size_t add)
{
	if (b->failed)
		return NULL;
	if (b->len + add > b->cap) {
		size_t cap = b->cap ? b->cap : 512;
		while (cap < b->len + add)
			cap *= 2;
		unsigned char *n = realloc(b->buf, cap);
		if (!n) {
			b->failed = 1;
			return NULL;
		}
		b->buf = n;
		b->cap = cap;
	}
	unsigned char *p = b->buf + b->len;
	memset(p, 0, add);
	b->len += add;
	return p;
}

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

size_t nlb_msg_start(struct nlb *b, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid)
{
	size_t off = b->len;
	unsigned char *p = grow(b, 16);

	if (p) {
		put16(p + 4, type);
		put16(p + 6, flags);
		put32(p + 8, seq);
		put32(p + 12, pid);
	}
	return off;
}

void nlb_msg_end(struct nlb *b, size_t msg)
{
	if (!b->failed)
		put32(b->buf + msg, (uint32_t)(b->len - msg));
}

void nlb_put(struct nlb *b, uint16_t type, const void *data, size_t len)
{
	unsigned char *p = grow(b, ALIGN4(4 + len));

	if (!p)
		return;
	put16(p, (uint16_t)(4 + len));
	put16(p + 2, type);
	if (len)
		memcpy(p + 4, data, len);
}

void nlb_raw(struct nlb *b, const void *data, size_t len)
{
	unsigned char *p = grow(b, ALIGN4(len));

	if (p && len)
		memcpy(p, data, len);
}

void nlb_u8(struct nlb *b, uint16_t type, uint8_t v)
{
	nlb_put(b, type, &v, 1);
}

void nlb_u32(struct nlb *b, uint16_t type, uint32_t v)
{
	nlb_put(b, type, &v, 4);
}

/* No pad attribute before a u64: the kernel adds one only on machines without efficient
 * unaligned access, and x86-64 has it. */
void nlb_u64(struct nlb *b, uint16_t type, uint64_t v)
{
	nlb_put(b, type, &v, 8);
}

void nlb_str(struct nlb *b, uint16_t type, const char *s)
{
	nlb_put(b, type, s, strlen(s) + 1);
}

size_t nlb_nest_start(struct nlb *b, uint16_t type)
{
	size_t off = b->len;

	nlb_put(b, type, NULL, 0);
	return off;
}

void nlb_nest_end(struct nlb *b, size_t nest)
{
	if (!b->failed)
		put16(b->buf + nest, (uint16_t)(b->len - nest));
}
