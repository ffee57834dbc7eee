// SPDX-License-Identifier: MIT
/*
 * rdma: iproute2's `rdma` tool as it would answer for softefa's devices, which the
 * kernel's RDMA netlink knows nothing of (docs/rdma-tool.md). `softefa run` puts it
 * first on PATH. It answers
 *   rdma [OPTIONS] link show [DEV[/PORT]]
 *   rdma [OPTIONS] dev show [DEV]
 *   rdma [OPTIONS] statistic [show [link [DEV[/PORT]]]]
 * with OPTIONS -j/--json, -p/--pretty, -d/--details anywhere on the line, in iproute2's
 * formats; everything else, and devices that are not ours, go to the real tool.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/net/counters.h"
#include "../src/util/fs.h"
#include "rdma_out.h"

/* Exported by softefa's libibverbs (SOFTEFA_PRIVATE_1). */
const char *softefa_run_dir(void);
/* libibverbs' (rdma-core declares it in its driver header, not installed here). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

struct opts {
	bool json, pretty;
	char **argv; /* the original command line, for the real tool */
	char *args[64];
	int nargs;
};

struct dev {
	struct ibv_device *ibdev;
	const char *name;
	int index;
	unsigned nports;
};

static struct dev devs[64];
static int ndevs;

/* ---- the real tool ------------------------------------------------------------------ */

/* The real rdma, not this program; NULL when there is none. */
static const char *real_tool(void)
{
	static const char *const where[] = {"/sbin/rdma", "/usr/sbin/rdma", "/usr/bin/rdma",
	                                    "/bin/rdma"};
	const char *env = getenv("SOFTEFA_REAL_RDMA");
	char self[PATH_MAX], real[PATH_MAX];

	/* Set, it names the tool; empty or "none", there is none (tests use that). */
	if (env)
		return *env && strcmp(env, "none") && !access(env, X_OK) ? env : NULL;
	if (!realpath("/proc/self/exe", self))
		self[0] = '\0';
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (realpath(where[i], real) && strcmp(real, self) && !access(real, X_OK))
			return where[i];
	return NULL;
}

/* Hands the whole command line to the real tool; returns only when there is none. */
static int pass_on(const struct opts *o, const char *why)
{
	const char *real = real_tool();

	if (real) {
		o->argv[0] = (char *)real;
		execv(real, o->argv);
		fprintf(stderr, "rdma: %s: %s\n", real, strerror(errno));
		return 1;
	}
	fprintf(stderr, "%s\n", why);
	return 1;
}

/* A name that is not one of ours: the real tool's business, else iproute2's error. */
static int not_ours(const struct opts *o, const char *why)
{
	struct rd_out out;

	if (real_tool())
		return pass_on(o, why);
	rd_out_begin(&out, o->json, o->pretty);
	fprintf(stderr, "%s\n", why);
	rd_out_end(&out);
	return 1;
}

/* ---- devices ------------------------------------------------------------------------ */

static void discover(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	/* The list is never freed: the names and paths stay valid until exit. */
	for (int i = 0; list && list[i] && ndevs < (int)(sizeof(devs) / sizeof(devs[0])); i++) {
		struct dev *d = &devs[ndevs++];
		char path[PATH_MAX];

		d->ibdev = list[i];
		d->name = ibv_get_device_name(list[i]);
		d->index = ibv_get_device_index(list[i]);
		if (d->index < 0)
			d->index = i;
		/* Ports are ports/1 .. ports/N of the device's sysfs directory. */
		for (d->nports = 0;; d->nports++) {
			snprintf(path, sizeof(path), "%s/ports/%u", list[i]->ibdev_path,
			         d->nports + 1);
			if (access(path, F_OK))
				break;
		}
	}
}

static struct dev *find_dev(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

/* The leading number of a sysfs file ("4: ACTIVE"), or -1. Read as libibverbs reads
 * any sysfs file: never through a link, never waiting on a FIFO. */
static long sysfs_num(const struct dev *d, const char *rel)
{
	char buf[64];

	if (ibv_read_sysfs_file(d->ibdev->ibdev_path, rel, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 0);
}

/* A GUID as iproute2 prints it: four groups of four hex digits, most significant first. */
static void guid_str(uint64_t g, char *out, size_t cap)
{
	snprintf(out, cap, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
	         (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static uint64_t sysfs_guid(const struct dev *d, const char *rel)
{
	unsigned a, b, c, e;
	char buf[64];

	if (ibv_read_sysfs_file(d->ibdev->ibdev_path, rel, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &e) != 4)
		return 0;
	return (uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | e;
}

/* iproute2's names for the kernel's numbers. */
static const char *name_of(long v, const char *const *names, size_t n, const char *other)
{
	return v >= 0 && (size_t)v < n ? names[v] : other;
}

static const char *const port_states[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
static const char *const phys_states[] = {
    "NOP",      "SLEEP",   "POLLING",     "DISABLED", "ARMED",   "LINK_UP", "LINK_ERROR_RECOVER",
    "PHY_TEST", "UNKNOWN", "OPA_OFFLINE", "UNKNOWN",  "OPA_TEST"};
static const char *const node_types[] = {"unknown", "ca",    "switch",    "router",
                                         "rnic",    "usnic", "usnic_udp", "unspecified"};
#define NAMES(a) (a), sizeof(a) / sizeof((a)[0])

/* ---- DEV[/PORT] --------------------------------------------------------------------- */

struct target {
	struct dev *dev; /* NULL: every device */
	unsigned port;   /* 0: every port */
};

/* Parses DEV[/PORT] as iproute2 does: 1 ours, 0 not ours, -1 ours but no such port. */
static int parse_link(const char *arg, struct target *t)
{
	char name[128];
	const char *slash = strchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);

	if (n >= sizeof(name))
		return 0;
	memcpy(name, arg, n);
	name[n] = '\0';
	t->dev = find_dev(name);
	t->port = 0;
	if (!t->dev)
		return 0;
	if (slash && slash[1]) {
		char *end;
		long p = strtol(slash + 1, &end, 10);

		if (*end || p < 1 || p > (long)t->dev->nports)
			return -1;
		t->port = (unsigned)p;
	}
	return 1;
}

/* ---- the commands ------------------------------------------------------------------- */

static void link_one(struct rd_out *o, const struct dev *d, unsigned port)
{
	char rel[64];

	rd_out_open(o);
	rd_out_u64(o, "ifindex", NULL, (uint64_t)d->index);
	rd_out_str(o, "ifname", "link %s/", d->name);
	rd_out_u64(o, "port", "%" PRIu64 " ", (uint64_t)port);
	/* EFA's port has no LID, subnet prefix or netdev: only its states. */
	snprintf(rel, sizeof(rel), "ports/%u/state", port);
	rd_out_str(o, "state", "state %s ",
	           name_of(sysfs_num(d, rel), NAMES(port_states), "UNKNOWN"));
	snprintf(rel, sizeof(rel), "ports/%u/phys_state", port);
	rd_out_str(o, "physical_state", "physical_state %s ",
	           name_of(sysfs_num(d, rel), NAMES(phys_states), "UNKNOWN"));
	rd_out_close(o);
}

static void dev_one(struct rd_out *o, const struct dev *d)
{
	char g[32];

	rd_out_open(o);
	rd_out_u64(o, "ifindex", "%" PRIu64 ": ", (uint64_t)d->index);
	rd_out_str(o, "ifname", "%s: ", d->name);
	rd_out_str(o, "node_type", "node_type %s ",
	           name_of(sysfs_num(d, "node_type"), NAMES(node_types), "unknown"));
	guid_str(be64toh(ibv_get_device_guid(d->ibdev)), g, sizeof(g));
	rd_out_str(o, "node_guid", "node_guid %s ", g);
	guid_str(sysfs_guid(d, "sys_image_guid"), g, sizeof(g));
	rd_out_str(o, "sys_image_guid", "sys_image_guid %s ", g);
	rd_out_close(o);
}

/*
 * A device's port counters, live: the sums of every engine of it (counters.h), the same
 * files `softefa stats` reads. The sysfs view is brought up to date on the way.
 */
/* The values in a device's published hw_counters files (0 where one cannot be read). */
static void read_published(const char *dir, uint64_t *v)
{
	for (unsigned i = 0; i < NET_EFA_PORT_COUNTERS; i++) {
		char buf[32];

		if (ibv_read_sysfs_file(dir, net_efa_port_names[i], buf, sizeof(buf)) > 0)
			v[i] = strtoull(buf, NULL, 10);
	}
}

/* Whether the stats directory may be read: absent (no engine ran yet: all 0) or one
 * that vets. Another user's is refused, once, on stderr (docs/security.md). */
static bool stats_dir_ok(const char *stats)
{
	static bool told;
	struct sefa_unsafe u;
	int err = sefa_vet_dir(stats, &u);

	if (err == -EPERM && !told) {
		told = true;
		fprintf(stderr, "rdma: not reading softefa's counters: %s %s\n", u.path, u.why);
	}
	return err != -EPERM;
}

static void port_counters(const struct dev *d, uint64_t v[NET_EFA_PORT_COUNTERS])
{
	uint64_t g = be64toh(ibv_get_device_guid(d->ibdev));
	char stats[PATH_MAX], pub[PATH_MAX], rel[PATH_MAX];
	struct net_counters sum;
	uint8_t addr[4];
	int lock;

	memset(v, 0, NET_EFA_PORT_COUNTERS * sizeof(*v));
	/* Our GUIDs are 5efa:<IPv4 address>:00<index> (src/verbs/device.c). */
	if (g >> 48 != 0x5efa)
		return;
	for (int i = 0; i < 4; i++)
		addr[i] = (uint8_t)(g >> (40 - 8 * i));
	snprintf(stats, sizeof(stats), "%s/stats", softefa_run_dir());
	snprintf(rel, sizeof(rel), "%s/ports/1/hw_counters", d->ibdev->ibdev_path);
	if (!stats_dir_ok(stats))
		return;
	lock = net_devsum_lock_bounded(stats, 2000);
	if (lock == -EWOULDBLOCK) {
		/* A publisher stopped while holding the lock (^Z): what it last published. */
		fprintf(stderr, "rdma: softefa's counters are locked by a stopped process; "
		                "showing the last published values\n");
		read_published(rel, v);
		return;
	}
	if (lock < 0) {
		/* No run directory yet: no engine ever ran, every counter is 0. */
		return;
	}
	net_devsum(stats, addr, (unsigned)(g & 0xff), &sum);
	net_efa_port_values(&sum, v);
	if (realpath(rel, pub))
		net_efa_publish(pub, v, NULL);
	net_devsum_unlock(lock);
}

static void stat_one(struct rd_out *o, const struct dev *d, unsigned port)
{
	uint64_t v[NET_EFA_PORT_COUNTERS];

	port_counters(d, v);
	rd_out_open(o);
	rd_out_str(o, "ifname", "link %s/", d->name);
	rd_out_u64(o, "port", "%" PRIu64 " ", (uint64_t)port);
	for (unsigned i = 0; i < NET_EFA_PORT_COUNTERS; i++) {
		rd_out_text(o, "\n    ");
		rd_out_u64(o, net_efa_port_names[i], NULL, v[i]);
		rd_out_text(o, net_efa_port_names[i]);
		rd_out_u64(o, NULL, " %" PRIu64 " ", v[i]);
	}
	rd_out_close(o);
}

/* link show / statistic show link: every port of the target. */
static int each_port(const struct opts *o, int argi,
                     void (*one)(struct rd_out *, const struct dev *, unsigned))
{
	struct target t = {NULL, 0};
	struct rd_out out;

	if (argi < o->nargs) {
		int r = parse_link(o->args[argi], &t);

		/* Past DEV/PORT iproute2 takes filters we do not know: the real tool's. */
		if (argi + 1 < o->nargs)
			return pass_on(o, "rdma: filters are not known here");
		if (r == 0)
			return not_ours(o, "Wrong device name");
		if (r < 0) {
			rd_out_begin(&out, o->json, o->pretty);
			fprintf(stderr, "Wrong device name\n");
			rd_out_end(&out);
			return 1;
		}
	}
	rd_out_begin(&out, o->json, o->pretty);
	for (int i = 0; i < ndevs; i++) {
		if (t.dev && t.dev != &devs[i])
			continue;
		for (unsigned p = 1; p <= devs[i].nports; p++)
			if (!t.port || t.port == p)
				one(&out, &devs[i], p);
	}
	rd_out_end(&out);
	return 0;
}

static int dev_show(const struct opts *o, int argi)
{
	struct dev *only = NULL;
	struct rd_out out;

	if (argi < o->nargs) {
		char why[256];

		only = find_dev(o->args[argi]);
		snprintf(why, sizeof(why), "Wrong device name - %s", o->args[argi]);
		if (argi + 1 < o->nargs)
			return pass_on(o, "rdma: parameters past the device are not known here");
		if (!only)
			return not_ours(o, why);
	}
	rd_out_begin(&out, o->json, o->pretty);
	for (int i = 0; i < ndevs; i++)
		if (!only || only == &devs[i])
			dev_one(&out, &devs[i]);
	rd_out_end(&out);
	return 0;
}

/* iproute2 takes any prefix of a word; the first word of its table that fits wins. */
static const char *word(const struct opts *o, int i, const char *const *table)
{
	if (i >= o->nargs)
		return "";
	for (; *table; table++)
		if (!strncmp(o->args[i], *table, strlen(o->args[i])))
			return *table;
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const objects[] = {"help",   "dev",       "link",    "resource",
	                                      "system", "statistic", "monitor", NULL};
	static const char *const dev_cmds[] = {"add", "delete", "show", "list",
	                                       "set", "help",   NULL};
	static const char *const link_cmds[] = {"add", "delete", "show", "list", "help", NULL};
	static const char *const stat_cmds[] = {"show", "list", "help",  "qp", "mr",
	                                        "mode", "set",  "unset", NULL};
	static const char *const stat_show_cmds[] = {"link", "mr", "help", NULL};
	struct opts o = {.argv = argv};
	const char *obj, *cmd;

	/* Options anywhere, as iproute2's getopt takes them; any we do not know (-V, -b,
	 * ...) means the line is for the real tool. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json"))
			a = "-j";
		else if (!strcmp(a, "--pretty"))
			a = "-p";
		else if (!strcmp(a, "--details") || !strcmp(a, "--raw"))
			a = "-d";
		if (a[0] != '-' || !a[1]) {
			if (o.nargs < (int)(sizeof(o.args) / sizeof(o.args[0])))
				o.args[o.nargs++] = argv[i];
			continue;
		}
		/* Short options may be bundled (-jp). -d and -r add nothing for EFA ports. */
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'j')
				o.json = true;
			else if (*c == 'p')
				o.pretty = true;
			else if (*c != 'd' && *c != 'r')
				return pass_on(&o, "rdma: that option is not known here, and no "
				                   "real rdma tool was found");
		}
	}
	obj = word(&o, 0, objects);
	if (!obj || !*obj ||
	    (strcmp(obj, "dev") && strcmp(obj, "link") && strcmp(obj, "statistic")))
		return pass_on(&o, "rdma: only link show, dev show and statistic show are known "
		                   "here, and no real rdma tool was found");
	discover();
	if (!strcmp(obj, "dev")) {
		cmd = word(&o, 1, dev_cmds);
		if (cmd && (!*cmd || !strcmp(cmd, "show") || !strcmp(cmd, "list")))
			return dev_show(&o, 2);
	} else if (!strcmp(obj, "link")) {
		cmd = word(&o, 1, link_cmds);
		if (cmd && (!*cmd || !strcmp(cmd, "show") || !strcmp(cmd, "list")))
			return each_port(&o, 2, link_one);
	} else {
		cmd = word(&o, 1, stat_cmds);
		if (cmd && (!*cmd || !strcmp(cmd, "show") || !strcmp(cmd, "list"))) {
			const char *sub = *cmd ? word(&o, 2, stat_show_cmds) : "";

			if (sub && !*sub)
				return each_port(&o, 3, stat_one);
			if (sub && !strcmp(sub, "link"))
				return each_port(&o, 3, stat_one);
		}
	}
	return pass_on(&o, "rdma: that command is not known here, and no real rdma tool was found");
}
