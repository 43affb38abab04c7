/* The fake SA on the wire: the engine's SA agent, answering SA MADs (class 0x03, version 2) on
 * QP1 of the SM's port (the fabric's `sm lid=`: a switch's management port 0 or a host port)
 * with emu_sa_process (emu/ib/sa.h): the policy's response delay on the virtual clock, no answer
 * for a drop, MAD status BUSY, forced error statuses; GetTable answers go out through RMPP
 * (emu/ib/gsi.h), ACKed by the requester. Lock held for every call. */
#ifndef RDMAEMU_EMU_SA_AGENT_H
#define RDMAEMU_EMU_SA_AGENT_H

#include <stdint.h>

#include "emu/ib/sa.h"

struct emu_engine;

/* Starts the engine's SA agent once (later calls return 0). 0, -ENODEV (the fabric has no SM,
 * or its LID is nobody's), -ENOMEM, or the MAD layer's error. */
int emu_sa_agent_start(struct emu_engine *e);
/* The running agent's SA (its policy, replay, state), NULL when not started. */
struct emu_sa *emu_sa_agent_sa(struct emu_engine *e);

struct emu_sa_agent_counters {
	uint64_t requests, answered, dropped, delayed;
};
int emu_sa_agent_counters(struct emu_engine *e, struct emu_sa_agent_counters *out);

#endif
