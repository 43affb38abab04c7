/* Internal interface of the emulated librdmacm (the counterpart of rdma-core's cma.h). */
#ifndef RDMAEMU_LIB_CMA_H
#define RDMAEMU_LIB_CMA_H

#include <errno.h>
#include <stdbool.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include "rdmaemu/compat.h"
#include "emu/process.h"

/* librdmacm's error convention: set errno, return -1. */
static inline int cma_err(int e)
{
	errno = e;
	return -1;
}

/* ucma_init(): the first call that needs "this machine" attaches the process to its emulated
 * host. Returns 0, or -1 with errno ENODEV when the host has no RDMA device (exactly what the
 * real library reports without hardware, spec §3.1) or the fabric could not be loaded. */
int cma_init(const struct emu_host **host);

#endif
