/* rsockets' defaults and their files (rsocket(7) "Configuration"): one value a file under
 * /etc/rdma/rsocket, or under $RDMAEMU_RSOCKET_CONF when set (tests). Read once, on the first
 * rsocket call that needs them; a file that is missing or does not parse keeps the default,
 * as rdma-core's library does. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "rs_sock.h"

#define RS_CONF_DIR "/etc/rdma/rsocket"
#define RS_SNDLOWAT 2048

static struct rs_config cfg = {
	.mem_default = 1 << 17,
	.wmem_default = 1 << 17,
	.sqsize_default = 384,
	.rqsize_default = 384,
	.inline_default = 64,
	.iomap_size = 0,
	.polling_time = 10,
	.wake_up_interval = 500,
};
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static int read_u32(const char *dir, const char *name, uint32_t *v)
{
	char path[4096];
	unsigned long x;
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%lu", &x) == 1;
	fclose(f);
	if (ok)
		*v = (uint32_t)x;
	return ok;
}

static int read_u16(const char *dir, const char *name, uint16_t *v)
{
	uint32_t x;

	if (!read_u32(dir, name, &x))
		return 0;
	*v = (uint16_t)x;
	return 1;
}

/* The iomap size travels as an 8-bit scaled value (rs_conn_data.target_iomap_size): values
 * up to 128 as they are, larger ones as 0x80 | (n >> 8). The file's value is read as such a
 * scaled value and kept in that form, rounded to one the field can carry. */
static uint16_t iomap_round(uint16_t n)
{
	unsigned v = n <= 128 ? n : (n & ~0x80u) << 8;

	return (uint8_t)(v <= 128 ? v : (0x80 | (v >> 8)));
}

static void cfg_read(void)
{
	const char *dir = getenv("RDMAEMU_RSOCKET_CONF");

	if (!dir || !*dir)
		dir = RS_CONF_DIR;
	read_u32(dir, "polling_time", &cfg.polling_time);
	read_u32(dir, "wake_up_interval", &cfg.wake_up_interval);
	read_u16(dir, "inline_default", &cfg.inline_default);
	read_u16(dir, "sqsize_default", &cfg.sqsize_default);
	read_u16(dir, "rqsize_default", &cfg.rqsize_default);
	if (read_u32(dir, "mem_default", &cfg.mem_default) && cfg.mem_default < 1)
		cfg.mem_default = 1;
	if (read_u32(dir, "wmem_default", &cfg.wmem_default) && cfg.wmem_default < RS_SNDLOWAT)
		cfg.wmem_default = RS_SNDLOWAT << 1;
	if (read_u16(dir, "iomap_size", &cfg.iomap_size))
		cfg.iomap_size = iomap_round(cfg.iomap_size);
}

const struct rs_config *rs_config(void)
{
	pthread_once(&cfg_once, cfg_read);
	return &cfg;
}
