/* A fake RDMA device for the system target (fakedev.c). */
#ifndef CONFORMANCE_FAKEDEV_H
#define CONFORMANCE_FAKEDEV_H

#include <stddef.h>

/* In the calling process only: a private mount namespace where libibverbs sees one fake rxe0
 * that cannot be opened and there is no /dev/infiniband/rdma_cm. Returns 0, or -1 with the
 * reason in why. */
int conf_fakedev_enter(char *why, size_t size);

#endif
