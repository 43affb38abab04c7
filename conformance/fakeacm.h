/* A fake ibacm for the ACM rows (spec §4.5): a server thread in the case's child that takes
 * librdmacm's connection, records every request byte for byte and answers each with the
 * bytes the case scripts.
 *
 * Where it listens is where the library under test looks:
 *   --target emu:    a private directory, named to the emulated library through
 *                    RDMAEMU_IBACM_SERVER_PATH / RDMAEMU_IBACM_PORT_FILE (lib/acm_sock.c);
 *   --target system: /run/ibacm.sock or /run/ibacm.port, which rdma-core reads (root only, and
 *                    only when no ibacm runs: precondition PRE_FAKEACM).
 * The file is removed as soon as the library has connected, so a case that crashes later
 * leaves no /run/ibacm.* behind (the runner also removes them after a PRE_FAKEACM case).
 */
#ifndef CONFORMANCE_FAKEACM_H
#define CONFORMANCE_FAKEACM_H

#include <stddef.h>
#include <stdint.h>

#define FAKEACM_HDR_LEN 16
#define FAKEACM_EP_LEN 72
#define FAKEACM_MAX_MSG (FAKEACM_HDR_LEN + 8 * FAKEACM_EP_LEN)
#define FAKEACM_MAX_REQS 8

/* The answer to one request: `len` bytes of `buf` are sent in one write (len 0: close the
 * connection without answering). `req`/`req_len` is the request. */
typedef size_t fakeacm_reply_fn(const uint8_t *req, size_t req_len, uint8_t *buf, void *arg);

enum fakeacm_transport { FAKEACM_UNIX, FAKEACM_TCP };

/* Starts the server; on failure ends the case as Notrun with the reason. */
void fakeacm_start(enum fakeacm_transport t, fakeacm_reply_fn *fn, void *arg);
/* Stops the server and removes its files. Requests stay readable. */
void fakeacm_stop(void);
/* Requests received so far, and the i-th one (NULL past the end). */
size_t fakeacm_nreqs(void);
const uint8_t *fakeacm_req(size_t i, size_t *len);
/* Whether the library connected at all. */
int fakeacm_connected(void);

/* Reply builders: a header (version 1, opcode RESOLVE|ACK 0x81, status, length = 16 + 72·n,
 * tid 0) followed by n entries appended with fakeacm_put_*; each returns the new length. */
size_t fakeacm_put_hdr(uint8_t *buf, uint8_t status);
size_t fakeacm_put_addr(uint8_t *buf, size_t len, uint32_t flags, int family, const void *addr);
/* A PATH entry: flags, then the 64-byte ibv_path_record as given. */
size_t fakeacm_put_path(uint8_t *buf, size_t len, uint32_t flags, const void *path64);
/* Sets the header's length field to `len` (what fakeacm_put_* do after each entry). */
void fakeacm_set_len(uint8_t *buf, uint16_t len);

/* Readers of a request: the header fields and entry i (flags, type, 64 info bytes). */
struct fakeacm_ep {
	uint32_t flags;
	uint16_t type, reserved;
	uint8_t info[64];
};
struct fakeacm_hdr {
	uint8_t version, opcode, status, data[3];
	uint16_t length;
	uint64_t tid;
};
void fakeacm_get_hdr(const uint8_t *msg, struct fakeacm_hdr *h);
void fakeacm_get_ep(const uint8_t *msg, size_t i, struct fakeacm_ep *ep);

#endif
