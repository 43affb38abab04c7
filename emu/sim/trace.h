/* RDMAEMU_TRACE: which protocol engines print a line per packet and per state transition on
 * stderr. The variable holds keywords separated by commas or spaces ("qp,cm", "mad neigh");
 * "all" turns every one on. Keywords: qp (data path), mad (MAD layer), cm (CM agents), cma
 * (the emulated kernel rdma_cm), neigh (neighbours), ucmalink (a process under rdmaemud: its
 * rdma_cm round trips to the daemon by command, at exit). A keyword matches whole, so "cma"
 * does not turn on "cm". */
#ifndef RDMAEMU_EMU_TRACE_H
#define RDMAEMU_EMU_TRACE_H

#include <stdarg.h>
#include <stdbool.h>

/* Whether `keyword` is on. *cache starts at -1; the environment is read once per cache (so
 * a module's check costs one load on its hot paths: inline, as a call was ~55 a connection in
 * bench/cm_bench). */
bool emu_trace_enabled_read(int *cache, const char *keyword);
static inline bool emu_trace_enabled(int *cache, const char *keyword)
{
	return *cache >= 0 ? *cache : emu_trace_enabled_read(cache, keyword);
}
/* A module's trace point as a macro: print(...) runs, and its arguments (state and opcode
 * names) are computed, only when `on` holds. As a function taking the arguments, a trace point
 * cost them with tracing off (~19 instructions each in the CM, ~140 a received data frame). */
#define EMU_TRACE_IF(on, print, ...)                                                      \
	do {                                                                               \
		if (on)                                                                    \
			print(__VA_ARGS__);                                                \
	} while (0)
/* Whether `keyword` is in the list `spec` (the parsing behind emu_trace_enabled). */
bool emu_trace_spec_has(const char *spec, const char *keyword);
/* "rdmaemu: <prefix><formatted line>\n" on stderr, in one write. */
void emu_trace_vprint(const char *prefix, const char *fmt, va_list ap);

#endif
