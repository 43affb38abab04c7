/* Netlink messages as the kernel lays them out: a header, then attributes of 4 + payload
 * bytes each, padded with zeros to 4 bytes, the header's length counting the padding of the
 * last one, an attribute's length never. One buffer holds one datagram. */
#ifndef RDMAEMU_HOST_NL_MSG_H
#define RDMAEMU_HOST_NL_MSG_H

#include <stddef.h>
#include <stdint.h>

struct nlb {
	unsigned char *buf;
	size_t len, cap;
	int failed; /* out of memory: the datagram is dropped */
};

void nlb_init(struct nlb *b);
void nlb_free(struct nlb *b);
/* Starts a message; returns its offset for nlb_msg_end. */
size_t nlb_msg_start(struct nlb *b, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid);
void nlb_msg_end(struct nlb *b, size_t msg);
void nlb_put(struct nlb *b, uint16_t type, const void *data, size_t len);
/* Bytes with no attribute header (the errno of NLMSG_DONE and NLMSG_ERROR), padded. */
void nlb_raw(struct nlb *b, const void *data, size_t len);
void nlb_u8(struct nlb *b, uint16_t type, uint8_t v);
void nlb_u32(struct nlb *b, uint16_t type, uint32_t v);
void nlb_u64(struct nlb *b, uint16_t type, uint64_t v);
void nlb_str(struct nlb *b, uint16_t type, const char *s);
size_t nlb_nest_start(struct nlb *b, uint16_t type);
void nlb_nest_end(struct nlb *b, size_t nest);

#endif
