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
#include "parse.h"

static struct sefa_config config;
static bool config_ok;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static bool env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *v = getenv(name);
	int err;

	*out = def;
	if (!v || !*v)
		return true;
	err = sefa_parse_u64(v, min, max, out);
	if (err) {
		sefa_log_config("%s=%s is %s [%llu, %llu]", name, v,
		                err == -ERANGE ? "out of the range" : "not a number in",
		                (unsigned long long)min, (unsigned long long)max);
		*out = def;
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
		sefa_log_config("%s is longer than %zu bytes", name, cap - 1);
		return false;
	}
	return true;
}

static bool mtu_valid(uint64_t v)
{
	if (v && v < 576) {
		sefa_log_config("SOFTEFA_MTU=%llu is below the IPv4 minimum of 576",
		                (unsigned long long)v);
		return false;
	}
	return true;
}

/*
 * One row per numeric variable, in the order they are read (and errors reported): the
 * field it sets, its default and range, and any further check. The limits' rows are the
 * documentation's source of truth.
 */
struct num_var {
	const char *name;
	size_t offset; /* in struct sefa_config */
	size_t size;   /* of the field: 1 (a bool), 2, 4 or 8 bytes */
	uint64_t def, min, max;
	bool (*valid)(uint64_t v); /* NULL: the range is all */
};

#define CFG(field) offsetof(struct sefa_config, field), sizeof(((struct sefa_config *)0)->field)

static const struct num_var transport_vars[] = {
    {"SOFTEFA_PORT", CFG(port), 0, 0, 65535, NULL},
    {"SOFTEFA_PATHS", CFG(paths), 8, 1, SEFA_MAX_PATHS, NULL},
    {"SOFTEFA_DEVICES", CFG(ndevs), 1, 1, SEFA_MAX_DEVICES, NULL},
    {"SOFTEFA_MTU", CFG(mtu), 0, 0, 65536, mtu_valid},
    {"SOFTEFA_SOCKBUF", CFG(sock_buf), 8u << 20, 64u << 10, 1u << 30, NULL},
    {"SOFTEFA_GSO", CFG(offload), 1, 0, 1, NULL},
    {"SOFTEFA_PROGRESS_RT", CFG(progress_rt), 0, 0, 1, NULL},
    {"SOFTEFA_IDLE_SLEEP_US", CFG(idle_sleep_us), 1000, 0, 100000, NULL},
    {"SOFTEFA_RINGS", CFG(rings), 0, 0, 1, NULL},
    {"SOFTEFA_UNSIGNALED", CFG(allow_unsignaled), 0, 0, 1, NULL},
    {"SOFTEFA_COMP_CNTR_BYTES", CFG(comp_cntr_bytes), 0, 0, 1, NULL},
    {"SOFTEFA_TIMEOUT_MS", CFG(srd_timeout_ms), 3000, 10, 3600000, NULL},
    {"SOFTEFA_RNR_DELAY_US", CFG(srd_rnr_delay_us), 100, 1, 10000000, NULL},
    {"SOFTEFA_RNR_MAX_US", CFG(srd_rnr_max_us), 10000, 1, 10000000, NULL},
    {"SOFTEFA_RTO_MIN_US", CFG(srd_rto_min_us), 1000, 10, 10000000, NULL},
    {"SOFTEFA_CC_HOST_TARGET_US", CFG(cc_host_target_us), 5000, 10, 10000000, NULL},
    {"SOFTEFA_ACK_LAZY_US", CFG(ack_lazy_us), 200, 0, 900, NULL},
    {"SOFTEFA_FAULT_DROP", CFG(fault_drop), 0, 0, 100, NULL},
    {"SOFTEFA_FAULT_DUP", CFG(fault_dup), 0, 0, 100, NULL},
    {"SOFTEFA_FAULT_REORDER", CFG(fault_reorder), 0, 0, 100, NULL},
    {"SOFTEFA_FAULT_CORRUPT", CFG(fault_corrupt), 0, 0, 100, NULL},
    {"SOFTEFA_FAULT_SEED", CFG(fault_seed), 0, 0, UINT64_MAX, NULL},
    {"SOFTEFA_AUTH", CFG(auth), 1, 0, 1, NULL},
};

static const struct num_var limit_vars[] = {
    {"SOFTEFA_MAX_QP", CFG(lim.max_qp), 256, 1, 65534, NULL},
    {"SOFTEFA_MAX_CQ", CFG(lim.max_cq), 512, 1, 1 << 20, NULL},
    {"SOFTEFA_MAX_CQE", CFG(lim.max_cqe), 32768, 1, 1 << 22, NULL},
    {"SOFTEFA_MAX_MR", CFG(lim.max_mr), 262144, 1, 1 << 24, NULL},
    {"SOFTEFA_MAX_PD", CFG(lim.max_pd), 256, 1, 1 << 20, NULL},
    {"SOFTEFA_MAX_AH", CFG(lim.max_ah), 1024, 1, 65535, NULL},
    {"SOFTEFA_MAX_MR_SIZE", CFG(lim.max_mr_size), 96ull << 30, 4096, 1ull << 47, NULL},
    {"SOFTEFA_MAX_SQ_WR", CFG(lim.max_sq_wr), 4096, 1, 1 << 16, NULL},
    {"SOFTEFA_MAX_RQ_WR", CFG(lim.max_rq_wr), 32768, 1, 1 << 20, NULL},
    {"SOFTEFA_MAX_SQ_SGE", CFG(lim.max_sq_sge), 2, 1, 16, NULL},
    {"SOFTEFA_MAX_RQ_SGE", CFG(lim.max_rq_sge), 3, 1, 16, NULL},
    {"SOFTEFA_INLINE_BUF_SIZE", CFG(lim.inline_buf_size), 32, 0, 4096, NULL},
    {"SOFTEFA_INLINE_BUF_SIZE_EX", CFG(lim.inline_buf_size_ex), 80, 0, 4096, NULL},
    {"SOFTEFA_MAX_RDMA_SIZE", CFG(lim.max_rdma_size), 1u << 30, 1, 0xffffffffu, NULL},
    {"SOFTEFA_MAX_MSG_SIZE", CFG(lim.max_msg_size), 8928, 256, 8928, NULL},
};

/* Reads every row of a table into c; false when any variable is malformed. */
static bool load_vars(struct sefa_config *c, const struct num_var *vars, size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		const struct num_var *nv = &vars[i];
		char *field = (char *)c + nv->offset;
		uint64_t v;

		ok &= env_u64(nv->name, nv->def, nv->min, nv->max, &v);
		if (nv->valid)
			ok &= nv->valid(v);
		if (nv->size == sizeof(bool))
			*(bool *)field = v != 0;
		else if (nv->size == sizeof(uint16_t))
			*(uint16_t *)field = (uint16_t)v;
		else if (nv->size == sizeof(uint32_t))
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
	}
	return ok;
}

static bool load_addr(struct sefa_config *c)
{
	const char *addr = getenv("SOFTEFA_ADDR");

	if (!addr || !*addr)
		addr = "127.0.0.1";
	if (inet_pton(AF_INET, addr, &c->addr) != 1 || c->addr.s_addr == htonl(INADDR_ANY)) {
		sefa_log_config("SOFTEFA_ADDR=%s is not a usable IPv4 address", addr);
		return false;
	}
	return true;
}

static bool ports_fit(const struct sefa_config *c)
{
	if (c->port && (uint32_t)c->port + c->paths * c->ndevs > 65536) {
		sefa_log_config("SOFTEFA_PORT=%u leaves no room for %u ports", c->port,
		                c->paths * c->ndevs);
		return false;
	}
	return true;
}

static bool load_dirs(struct sefa_config *c)
{
	char def_run[SEFA_PATH_MAX];
	char def_sysfs[SEFA_PATH_MAX + 8];
	bool ok = true;

	snprintf(def_run, sizeof(def_run), "/tmp/softefa-%u", (unsigned)getuid());
	ok &= env_path("SOFTEFA_RUN_DIR", def_run, c->run_dir, sizeof(c->run_dir));
	if (snprintf(def_sysfs, sizeof(def_sysfs), "%.*s/sysfs", SEFA_PATH_MAX - 8, c->run_dir) < 0)
		def_sysfs[0] = '\0';
	ok &= env_path("SOFTEFA_SYSFS_DIR", def_sysfs, c->sysfs_dir, sizeof(c->sysfs_dir));
	ok &= env_path("SOFTEFA_KEY_FILE", "", c->key_file, sizeof(c->key_file));
	ok &= env_path("SOFTEFA_TRACE", "", c->trace, sizeof(c->trace));
	return ok;
}

#define NVARS(t) (sizeof(t) / sizeof((t)[0]))

/*
 * The variables read outside the tables above: here, by the tool, and by the tests,
 * with their defaults and what they take as `softefa config` shows them (NULL default:
 * computed, text_default).
 */
struct text_var {
	const char *name, *def, *range;
};

static const struct text_var text_vars[] = {
    {"SOFTEFA_LOG", "1", "0-4"},
    {"SOFTEFA_ADDR", "127.0.0.1", "IPv4, not 0.0.0.0"},
    {"SOFTEFA_RUN_DIR", NULL, "a directory private to you"},
    {"SOFTEFA_SYSFS_DIR", NULL, "a directory private to you"},
    {"SOFTEFA_KEY_FILE", NULL, "a file of yours, mode 0600 or 0400"},
    {"SOFTEFA_TRACE", "(none: off)", "a file to write a pcap to; %p: the process id"},
    {"SOFTEFA_LIBDIR", "<softefa>/../lib/softefa", "a directory (softefa run)"},
    {"SOFTEFA_REAL_RDMA", "/sbin/rdma ... (found)", "a program, or none"},
    {"SOFTEFA_TEST_SEED", "the clock", "a number (test programs)"},
    {"SOFTEFA_TEST_CAMPAIGNS", "100", "a number (test_sim)"},
    {"SOFTEFA_GOLDEN_UPDATE", "0", "0-1 (test_sim)"},
};

/* Edits (insert, delete, change one character, case aside) between two names, capped
 * at 9. */
static unsigned name_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (la >= 64 || lb >= 64)
		return 9;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (toupper((unsigned char)a[i - 1]) !=
			                                     toupper((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb] < 9 ? row[lb] : 9;
}

/* The known name nearest to name, and its distance. */
static const char *nearest_name(const char *name, unsigned *dist)
{
	static const struct {
		const struct num_var *t;
		size_t n;
	} tables[] = {{transport_vars, NVARS(transport_vars)}, {limit_vars, NVARS(limit_vars)}};
	const char *best = NULL;

	*dist = 9;
	for (size_t k = 0; k < NVARS(tables); k++)
		for (size_t i = 0; i < tables[k].n; i++)
			if (name_distance(name, tables[k].t[i].name) < *dist) {
				best = tables[k].t[i].name;
				*dist = name_distance(name, best);
			}
	for (size_t i = 0; i < NVARS(text_vars); i++)
		if (name_distance(name, text_vars[i].name) < *dist) {
			best = text_vars[i].name;
			*dist = name_distance(name, best);
		}
	return best;
}

/*
 * A SOFTEFA_* variable no one reads is most likely a typo for one that is read, and
 * ignoring it silently would leave the user believing it took effect: said, once a
 * process, with the nearest name. (It changes nothing else: a variable of a newer
 * softefa must not take the device away.)
 */
static void say_unknown_names(void)
{
	extern char **environ;

	for (char **env = environ; env && *env; env++) {
		char name[64];
		size_t len = strcspn(*env, "=");
		unsigned dist;
		const char *near;

		if (strncmp(*env, "SOFTEFA_", 8) || len >= sizeof(name))
			continue;
		memcpy(name, *env, len);
		name[len] = '\0';
		near = nearest_name(name, &dist);
		if (dist == 0 && !strcmp(name, near))
			continue;
		/* A slip (a letter or two for a long name), or a name cut short: a guess. */
		if (near && (dist * 3 <= len - 8 || dist == 1 || !strncmp(name, near, len)))
			sefa_log_config("%s is not a softefa variable: ignored (%s?)", name, near);
		else
			sefa_log_config(
			    "%s is not a softefa variable: ignored (man 7 softefa-config)", name);
	}
}

static void config_load(void)
{
	struct sefa_config *c = &config;
	uint64_t v;
	bool ok = true;

	ok &= env_u64("SOFTEFA_LOG", SEFA_LOG_ERROR, 0, SEFA_LOG_DEBUG, &v);
	sefa_log_threshold = (int)v;
	ok &= load_addr(c);
	ok &= load_vars(c, transport_vars, NVARS(transport_vars));
	ok &= ports_fit(c);
	ok &= load_dirs(c);
	ok &= load_vars(c, limit_vars, NVARS(limit_vars));
	if (c->lim.inline_buf_size > c->lim.inline_buf_size_ex)
		c->lim.inline_buf_size_ex = c->lim.inline_buf_size;
	say_unknown_names();
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

/* ---- softefa config ---------------------------------------------------------------- */

static void list_num(const struct num_var *nv, struct sefa_var_info *v)
{
	const char *env = getenv(nv->name);
	uint64_t x;

	v->name = nv->name;
	snprintf(v->def, sizeof(v->def), "%llu", (unsigned long long)nv->def);
	snprintf(v->range, sizeof(v->range), "%llu-%llu", (unsigned long long)nv->min,
	         (unsigned long long)nv->max);
	v->source = env && *env ? "environment" : "default";
	if (!env || !*env)
		snprintf(v->value, sizeof(v->value), "%s", v->def);
	else if (sefa_parse_u64(env, nv->min, nv->max, &x) || (nv->valid && !nv->valid(x)))
		snprintf(v->value, sizeof(v->value), "%s (invalid: no device is listed)", env);
	else
		snprintf(v->value, sizeof(v->value), "%llu", (unsigned long long)x);
}

/* The defaults that depend on others: the run directory's, and what lies in it. */
static void text_default(const char *name, char *out, size_t cap)
{
	const char *run = getenv("SOFTEFA_RUN_DIR");
	char def_run[64];

	snprintf(def_run, sizeof(def_run), "/tmp/softefa-%u", (unsigned)getuid());
	if (!run || !*run)
		run = def_run;
	if (!strcmp(name, "SOFTEFA_RUN_DIR"))
		snprintf(out, cap, "%s", def_run);
	else if (!strcmp(name, "SOFTEFA_SYSFS_DIR"))
		snprintf(out, cap, "%.*s/sysfs", SEFA_PATH_MAX, run);
	else
		snprintf(out, cap, "%.*s/auth.key", SEFA_PATH_MAX, run);
}

static void list_text(const struct text_var *tv, struct sefa_var_info *v)
{
	const char *env = getenv(tv->name);

	v->name = tv->name;
	if (tv->def)
		snprintf(v->def, sizeof(v->def), "%s", tv->def);
	else
		text_default(tv->name, v->def, sizeof(v->def));
	snprintf(v->range, sizeof(v->range), "%s", tv->range);
	v->source = env ? "environment" : "default";
	snprintf(v->value, sizeof(v->value), "%.*s", SEFA_PATH_MAX, env ? env : v->def);
}

void sefa_config_each(void (*fn)(const struct sefa_var_info *v, void *arg), void *arg)
{
	static const struct {
		const struct num_var *t;
		size_t n;
	} tables[] = {{transport_vars, NVARS(transport_vars)}, {limit_vars, NVARS(limit_vars)}};
	struct sefa_var_info v;

	for (size_t i = 0; i < NVARS(text_vars); i++) {
		list_text(&text_vars[i], &v);
		fn(&v, arg);
	}
	for (size_t k = 0; k < NVARS(tables); k++)
		for (size_t i = 0; i < tables[k].n; i++) {
			list_num(&tables[k].t[i], &v);
			fn(&v, arg);
		}
}
