/* The program's signal handlers, seen by the engine's interruptible waits (emu/sim/apptime.h).
 *
 * The kernel ends an interruptible wait with EINTR when a signal whose handler lacks
 * SA_RESTART arrives during it, and restarts it otherwise; it knows, because the wait and the
 * signal check are one. The engine's waits sleep in a futex that the mutex's unlock precedes:
 * a signal delivered in between runs its handler before the sleep begins, and the sleep
 * cannot tell. So every handler the program installs runs behind a trampoline that counts,
 * per thread, the handlers run and those without SA_RESTART; a wait compares the counts
 * before and after. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "emu/sim/apptime_priv.h"

#define NSIGS 65

/* The program's own dispositions, as it set them (read by the trampoline, so written before
 * our handler is installed). */
static struct sigaction app_sa[NSIGS];
static bool wrapped[NSIGS];

static __thread uint64_t n_handled, n_norestart;

static void trampoline(int sig, siginfo_t *info, void *uc)
{
	const struct sigaction *sa = &app_sa[sig];
	int saved = errno;

	n_handled++;
	if (!(sa->sa_flags & SA_RESTART))
		n_norestart++;
	errno = saved;
	if (sa->sa_flags & SA_SIGINFO)
		sa->sa_sigaction(sig, info, uc);
	else if (sa->sa_handler != SIG_IGN && sa->sa_handler != SIG_DFL)
		sa->sa_handler(sig);
}

static bool catchable(int sig)
{
	return sig > 0 && sig < NSIGS && sig != SIGKILL && sig != SIGSTOP;
}

/* Installs act for sig, behind the trampoline when it is a handler. */
static int install(int sig, const struct sigaction *act)
{
	struct sigaction ours;

	if (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN) {
		wrapped[sig] = false;
		return sigaction(sig, act, NULL);
	}
	app_sa[sig] = *act;
	ours = *act;
	ours.sa_flags |= SA_SIGINFO;
	ours.sa_sigaction = trampoline;
	wrapped[sig] = true;
	return sigaction(sig, &ours, NULL);
}

int emu_apptime_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;

	if (!catchable(sig) || !emu_apptime_bound())
		return emu_apptime_real.sigaction(sig, act, old);
	if (sigaction(sig, NULL, &prev))
		return -1;
	if (old)
		*old = wrapped[sig] ? app_sa[sig] : prev;
	if (!act)
		return 0;
	return install(sig, act);
}

sighandler_t emu_apptime_signal(int sig, sighandler_t fn)
{
	struct sigaction sa, old;

	if (!catchable(sig) || !emu_apptime_bound())
		return emu_apptime_real.signal(sig, fn);
	/* glibc's signal(): BSD semantics */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (emu_apptime_sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

void emu_apptime_wrap_handlers(void)
{
	for (int sig = 1; sig < NSIGS; sig++) {
		struct sigaction sa;

		if (!catchable(sig) || sigaction(sig, NULL, &sa) || sa.sa_handler == SIG_DFL ||
		    sa.sa_handler == SIG_IGN)
			continue;
		install(sig, &sa);
	}
}

bool emu_apptime_signal_counts(uint64_t *handled, uint64_t *norestart)
{
	if (!emu_apptime_bound())
		return false;
	*handled = n_handled;
	*norestart = n_norestart;
	return true;
}
