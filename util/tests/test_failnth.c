/* failnth: the N-th call of the named kind fails once (kmem's allocations with ENOMEM), other
 * kinds and other calls go on, emu_fail_arm counts from its call, malformed settings inject nothing, and RDMAEMU_FAIL_COUNT=1
 * prints every count at exit. Each case runs in a child, since the settings are read once a
 * process. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/failnth.h"
#include "util/kmem.h"

/* Runs body in a child with RDMAEMU_FAIL_NTH=nth; its exit status (0: every check held). */
static int in_child(const char *nth, int (*body)(void))
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("RDMAEMU_FAIL_NTH", nth, 1);
		unsetenv("RDMAEMU_FAIL_COUNT");
		_exit(body());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* alloc:3: the first two allocations succeed, the third is NULL with ENOMEM, the fourth
 * succeeds again; four calls counted, none of another kind. */
static int third_alloc_fails(void)
{
	void *p[4];

	for (int i = 0; i < 4; i++) {
		errno = 0;
		p[i] = i == 1 ? emu_kmem_alloc(100) : emu_kmem_zalloc(100);
		if ((i == 2) != (p[i] == NULL))
			return 10 + i;
		if (i == 2 && errno != ENOMEM)
			return 20;
	}
	emu_kmem_free(p[0]);
	emu_kmem_free(p[1]);
	emu_kmem_free(p[3]);
	if (emu_fail_count(EMU_FAIL_ALLOC) != 4 || emu_fail_count(EMU_FAIL_THREAD) != 0)
		return 21;
	return 0;
}

static int enomem_errno(void)
{
	errno = 0;
	if (emu_kmem_table_zalloc(EMU_KMEM_TABLE_MIN) != NULL)
		return 1;
	return errno == ENOMEM ? 0 : 2;
}

static int second_thread_fails(void)
{
	if (emu_fail_nth(EMU_FAIL_THREAD) != 0 || emu_fail_nth(EMU_FAIL_ALLOC) != 0)
		return 1;
	if (emu_fail_nth(EMU_FAIL_THREAD) != 1 || emu_fail_nth(EMU_FAIL_THREAD) != 0)
		return 2;
	return emu_fail_count(EMU_FAIL_THREAD) == 3 ? 0 : 3;
}

/* emu_fail_arm: counted from the call, replaces the environment's setting, 0 disarms. */
static int armed(void)
{
	if (emu_fail_nth(EMU_FAIL_SOCKET) != 0)
		return 1;
	emu_fail_arm(EMU_FAIL_SOCKET, 2);
	if (emu_fail_nth(EMU_FAIL_SOCKET) != 0 || emu_fail_nth(EMU_FAIL_SOCKET) != 1 ||
	    emu_fail_nth(EMU_FAIL_SOCKET) != 0)
		return 2;
	emu_fail_arm(EMU_FAIL_EVENTFD, 1);
	emu_fail_arm(EMU_FAIL_EVENTFD, 0);
	if (emu_fail_nth(EMU_FAIL_EVENTFD) != 0)
		return 3;
	/* the environment named alloc:1; the arm replaced it */
	if (emu_fail_nth(EMU_FAIL_ALLOC) != 0)
		return 4;
	return 0;
}

/* Ten calls of every kind, none failing. */
static int nothing_fails(void)
{
	for (int k = 0; k < EMU_FAIL_KINDS; k++)
		for (int i = 0; i < 10; i++)
			if (emu_fail_nth((enum emu_fail_kind)k))
				return 1;
	return 0;
}

static void test_nth_alloc(void **state)
{
	(void)state;
	assert_int_equal(in_child("alloc:3", third_alloc_fails), 0);
	assert_int_equal(in_child("alloc:1", enomem_errno), 0);
}

static void test_nth_other_kind(void **state)
{
	(void)state;
	assert_int_equal(in_child("thread:2", second_thread_fails), 0);
}

static void test_arm(void **state)
{
	(void)state;
	assert_int_equal(in_child("alloc:1", armed), 0);
}

static void test_malformed(void **state)
{
	(void)state;
	assert_int_equal(in_child("alloc:0", nothing_fails), 0);
	assert_int_equal(in_child("alloc:", nothing_fails), 0);
	assert_int_equal(in_child("alloc:2x", nothing_fails), 0);
	assert_int_equal(in_child("memory:1", nothing_fails), 0);
	assert_int_equal(in_child("alloc1", nothing_fails), 0);
	assert_int_equal(in_child("", nothing_fails), 0);
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(emu_fail_kind_name(EMU_FAIL_ALLOC), "alloc");
	assert_string_equal(emu_fail_kind_name(EMU_FAIL_MMAP), "mmap");
	assert_string_equal(emu_fail_kind_name(EMU_FAIL_EVENTFD), "eventfd");
	assert_string_equal(emu_fail_kind_name(EMU_FAIL_SOCKET), "socket");
	assert_string_equal(emu_fail_kind_name(EMU_FAIL_THREAD), "thread");
}

/* RDMAEMU_FAIL_COUNT=1: the exact counts line on stderr at exit. */
static void test_count_line(void **state)
{
	int fds[2];
	char buf[256];
	ssize_t n, got = 0;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		unsetenv("RDMAEMU_FAIL_NTH");
		setenv("RDMAEMU_FAIL_COUNT", "1", 1);
		emu_kmem_free(emu_kmem_zalloc(8));
		emu_fail_nth(EMU_FAIL_SOCKET);
		emu_fail_nth(EMU_FAIL_SOCKET);
		emu_fail_nth(EMU_FAIL_MMAP);
		exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	buf[got] = '\0';
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_string_equal(buf, "rdmaemu-fail: alloc=1 mmap=1 eventfd=0 socket=2 thread=0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nth_alloc),
		cmocka_unit_test(test_nth_other_kind),
		cmocka_unit_test(test_arm),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_count_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
