// SPDX-License-Identifier: MIT
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static struct sefa_config config;
static bool config_ok;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

int sefa_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	/* Byte counts may carry a binary suffix: 64K, 8M, 96G. */
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (errno || *end || (v << shift) >> shift != v)
		return -EINVAL;
	v <<= shift;
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One row per tunable limit: the table is the documentation's source of truth. */
struct limit_var {
	const char *name;
	size_t offset;
	int is64;
	uint64_t def, min, max;
};

#define LIM32(field) offsetof(struct sefa_limits, field), 0
#define LIM64(field) offsetof(struct sefa_limits, field), 1

static const struct limit_var limit_vars[] = {
    {"SOFTEFA_MAX_QP", LIM32(max_qp), 256, 1, 65534},
    {"SOFTEFA_MAX_CQ", LIM32(max_cq), 512, 1, 1 << 20},
    {"SOFTEFA_MAX_CQE", LIM32(max_cqe), 32768, 1, 1 << 22},
    {"SOFTEFA_MAX_MR", LIM32(max_mr), 262144, 1, 1 << 24},
    {"SOFTEFA_MAX_PD", LIM32(max_pd), 256, 1, 1 << 20},
    {"SOFTEFA_MAX_AH", LIM32(max_ah), 1024, 1, 65535},
    {"SOFTEFA_MAX_MR_SIZE", LIM64(max_mr_size), 96ull << 30, 4096, 1ull << 47},
    {"SOFTEFA_MAX_SQ_WR", LIM32(max_sq_wr), 4096, 1, 1 << 16},
    {"SOFTEFA_MAX_RQ_WR", LIM32(max_rq_wr), 32768, 1, 1 << 20},
    {"SOFTEFA_MAX_SQ_SGE", LIM32(max_sq_sge), 2, 1, 16},
    {"SOFTEFA_MAX_RQ_SGE", LIM32(max_rq_sge), 3, 1, 16},
    {"SOFTEFA_INLINE_BUF_SIZE", LIM32(inline_buf_size), 32, 0, 4096},
    {"SOFTEFA_INLINE_BUF_SIZE_EX", LIM32(inline_buf_size_ex), 80, 0, 4096},
    {"SOFTEFA_MAX_RDMA_SIZE", LIM32(max_rdma_size), 1u << 30, 1, 0xffffffffu},
    {"SOFTEFA_MAX_MSG_SIZE", LIM32(max_msg_size), 8928, 256, 8928},
};

static bool env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *v = getenv(name);

	*out = def;
	if (!v || !*v)
		return true;
	if (sefa_parse_u64(v, min, max, out)) {
		sefa_log(SEFA_LOG_ERROR, "%s=%s is not a number in [%llu, %llu]", name, v,
		         (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	return true;
}

static bool env_path(const char *name, const char *def, char *out, size_t cap)
{
	const char *v = getenv(name);
	int n;

	n = snprintf(out, cap, "%s", v && *v ? v : def);
	if (n < 0 || (size_t)n >= cap) {
		sefa_log(SEFA_LOG_ERROR, "%s is longer than %zu bytes", name, cap - 1);
		return false;
	}
	return true;
}

static void config_load(void)
{
	struct sefa_config *c = &config;
	const char *addr;
	char def_run[SEFA_PATH_MAX];
	char def_sysfs[SEFA_PATH_MAX + 8];
	uint64_t v;
	bool ok = true;
	size_t i;

	ok &= env_u64("SOFTEFA_LOG", SEFA_LOG_ERROR, 0, SEFA_LOG_DEBUG, &v);
	sefa_log_threshold = (int)v;

	addr = getenv("SOFTEFA_ADDR");
	if (!addr || !*addr)
		addr = "127.0.0.1";
	if (inet_pton(AF_INET, addr, &c->addr) != 1 || c->addr.s_addr == htonl(INADDR_ANY)) {
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_ADDR=%s is not a usable IPv4 address", addr);
		ok = false;
	}
	ok &= env_u64("SOFTEFA_PORT", 0, 0, 65535, &v);
	c->port = (uint16_t)v;
	ok &= env_u64("SOFTEFA_PATHS", 8, 1, SEFA_MAX_PATHS, &v);
	c->paths = (uint32_t)v;
	ok &= env_u64("SOFTEFA_DEVICES", 1, 1, SEFA_MAX_DEVICES, &v);
	c->ndevs = (uint32_t)v;
	ok &= env_u64("SOFTEFA_MTU", 0, 0, 65536, &v);
	if (v && v < 576) {
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_MTU=%llu is below the IPv4 minimum of 576",
		         (unsigned long long)v);
		ok = false;
	}
	c->mtu = (uint32_t)v;
	ok &= env_u64("SOFTEFA_SOCKBUF", 8u << 20, 64u << 10, 1u << 30, &v);
	c->sock_buf = (uint32_t)v;
	ok &= env_u64("SOFTEFA_GSO", 1, 0, 1, &v);
	c->offload = v != 0;
	ok &= env_u64("SOFTEFA_UNSIGNALED", 0, 0, 1, &v);
	c->allow_unsignaled = v != 0;
	ok &= env_u64("SOFTEFA_COMP_CNTR_BYTES", 0, 0, 1, &v);
	c->comp_cntr_bytes = v != 0;
	ok &= env_u64("SOFTEFA_TIMEOUT_MS", 3000, 10, 3600000, &v);
	c->srd_timeout_ms = (uint32_t)v;
	ok &= env_u64("SOFTEFA_RNR_DELAY_US", 100, 1, 10000000, &v);
	c->srd_rnr_delay_us = (uint32_t)v;
	ok &= env_u64("SOFTEFA_RNR_MAX_US", 10000, 1, 10000000, &v);
	c->srd_rnr_max_us = (uint32_t)v;
	ok &= env_u64("SOFTEFA_RTO_MIN_US", 1000, 10, 10000000, &v);
	c->srd_rto_min_us = (uint32_t)v;
	ok &= env_u64("SOFTEFA_FAULT_DROP", 0, 0, 100, &v);
	c->fault_drop = (uint32_t)v;
	ok &= env_u64("SOFTEFA_FAULT_DUP", 0, 0, 100, &v);
	c->fault_dup = (uint32_t)v;
	ok &= env_u64("SOFTEFA_FAULT_REORDER", 0, 0, 100, &v);
	c->fault_reorder = (uint32_t)v;
	ok &= env_u64("SOFTEFA_FAULT_SEED", 0, 0, UINT64_MAX, &v);
	c->fault_seed = v;
	if (c->port && (uint32_t)c->port + c->paths * c->ndevs > 65536) {
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_PORT=%u leaves no room for %u ports", c->port,
		         c->paths * c->ndevs);
		ok = false;
	}

	snprintf(def_run, sizeof(def_run), "/tmp/softefa-%u", (unsigned)getuid());
	ok &= env_path("SOFTEFA_RUN_DIR", def_run, c->run_dir, sizeof(c->run_dir));
	if (snprintf(def_sysfs, sizeof(def_sysfs), "%.*s/sysfs", SEFA_PATH_MAX - 8, c->run_dir) < 0)
		def_sysfs[0] = '\0';
	ok &= env_path("SOFTEFA_SYSFS_DIR", def_sysfs, c->sysfs_dir, sizeof(c->sysfs_dir));

	for (i = 0; i < sizeof(limit_vars) / sizeof(limit_vars[0]); i++) {
		const struct limit_var *lv = &limit_vars[i];
		char *field = (char *)&c->lim + lv->offset;

		ok &= env_u64(lv->name, lv->def, lv->min, lv->max, &v);
		if (lv->is64)
			*(uint64_t *)field = v;
		else
			*(uint32_t *)field = (uint32_t)v;
	}
	if (c->lim.inline_buf_size > c->lim.inline_buf_size_ex)
		c->lim.inline_buf_size_ex = c->lim.inline_buf_size;
	config_ok = ok;
}

const struct sefa_config *sefa_config_get(void)
{
	pthread_once(&config_once, config_load);
	return &config;
}

bool sefa_config_valid(void)
{
	pthread_once(&config_once, config_load);
	return config_ok;
}
