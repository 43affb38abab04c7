/* maxrss: runs a command and prints the peak resident memory of it and of every process it
 * waited for (getrusage RUSAGE_CHILDREN: the largest, not the sum), for bench/run-scale's
 * memory per QP and per connection of programs that exit when done (cmtime).
 *
 *   bench/maxrss OUT-FILE COMMAND [ARG...]
 *
 * Writes "maxrss_kib=N status=S" to OUT-FILE (S: the exit status, or 128 + the signal) and
 * exits with the command's status, so it stands in for the command in a script: SIGTERM and
 * SIGINT are passed on to the command. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = pass_on };
	struct rusage ru;
	int status, rc;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss OUT-FILE COMMAND [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("maxrss: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "maxrss: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	child = pid;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("maxrss: waitpid");
			return 1;
		}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (getrusage(RUSAGE_CHILDREN, &ru)) {
		perror("maxrss: getrusage");
		return 1;
	}
	out = fopen(argv[1], "w");
	if (!out || fprintf(out, "maxrss_kib=%ld status=%d\n", ru.ru_maxrss, rc) < 0 ||
	    fclose(out)) {
		fprintf(stderr, "maxrss: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return rc;
}
