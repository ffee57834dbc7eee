// SPDX-License-Identifier: MIT
/*
 * Device discovery: the list of efa_N devices and the small sysfs-like tree that
 * clients read about them (docs/sysfs.md). Devices live for the whole process, as
 * applications keep struct ibv_device pointers after freeing the list.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/counters.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/rundir.h"
#include "sefa.h"

static struct sefa_device devices[SEFA_MAX_DEVICES];

static int sefa_mkdirs_755(const char *path)
{
	return sefa_mkdirs(path, 0755);
}

/* Formats a path; the roots are short (SEFA_PATH_MAX), so truncation means misuse. */
static void pathf(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(out, cap, fmt, ap) >= (int)cap)
		out[0] = '\0';
	va_end(ap);
}
static unsigned ndevices;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

/*
 * The sysfs tree of this configuration: $SOFTEFA_SYSFS_DIR/<key>, the key naming what
 * the tree's content depends on (format, device count, address), so processes with
 * other settings use other trees and no tree ever changes (docs/sysfs.md).
 */
#define SYSFS_FORMAT "v4"
#define SYSFS_STAMP  "softefa-sysfs"
static char tree_dir[PATH_MAX];
/* The tree at tree_dir vetted whole (docs/security.md): only then is it handed out. */
static bool tree_ok;

bool sefa_is_our_device(const struct ibv_device *dev)
{
	const struct sefa_device *d = (const struct sefa_device *)dev;

	return d >= devices && d < devices + SEFA_MAX_DEVICES;
}

bool sefa_is_our_context(const struct ibv_context *ctx)
{
	return ctx && sefa_is_our_device(ctx->device);
}

/*
 * Whether the engines could bind SOFTEFA_ADDR: an address no interface of this host
 * holds lists no device (as a malformed variable does), said once, rather than devices
 * every open of which fails.
 */
static bool addr_usable(struct in_addr ip, const char *text)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = ip};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return true; /* no socket to try with: the engine will say what is wrong */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = errno;
	close(fd);
	if (err == EADDRNOTAVAIL) {
		sefa_log_config(
		    "SOFTEFA_ADDR=%s is not an address of this host (see `ip -4 addr`): no device",
		    text);
		return false;
	}
	return true;
}

static void devices_init(void)
{
	const struct sefa_config *cfg = sefa_config_get();
	uint32_t ip = ntohl(cfg->addr.s_addr);
	char addr[INET_ADDRSTRLEN];

	if (!sefa_config_valid())
		return;
	/* No private place at all for a tree (the reason was logged): no device, rather
	 * than paths into a place someone else may fill. */
	if (!*sefa_sysfs_root())
		return;
	inet_ntop(AF_INET, &cfg->addr, addr, sizeof(addr));
	if (!addr_usable(cfg->addr, addr))
		return;
	pathf(tree_dir, sizeof(tree_dir), "%s/%s-%udev-%s", sefa_sysfs_root(), SYSFS_FORMAT,
	      cfg->ndevs, addr);
	/* A device's paths (struct ibv_device: 256 bytes) must hold the tree's path and
	 * "/class/infiniband_verbs/uverbsNN": a longer setting lists no device. */
	if (!tree_dir[0] || strlen(tree_dir) + 40 > sizeof(devices[0].ibdev.ibdev_path)) {
		sefa_log(SEFA_LOG_ERROR,
		         "SOFTEFA_SYSFS_DIR is too long (%zu characters): no device",
		         strlen(sefa_sysfs_root()));
		tree_dir[0] = '\0';
		return;
	}
	for (unsigned i = 0; i < cfg->ndevs; i++) {
		struct sefa_device *d = &devices[i];

		d->index = i;
		d->ibdev.node_type = IBV_NODE_UNSPECIFIED;
		d->ibdev.transport_type = IBV_TRANSPORT_UNSPECIFIED;
		snprintf(d->ibdev.name, sizeof(d->ibdev.name), "efa_%u", i);
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%u", i);
		pathf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
		      "%s/class/infiniband_verbs/uverbs%u", tree_dir, i);
		pathf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
		      "%s/class/infiniband/efa_%u", tree_dir, i);
		/* Stable across runs and unique per host address: 5e:fa:<ipv4>:00:<index>. */
		d->guid = htobe64(0x5efa000000000000ull | ((uint64_t)ip << 16) | i);
	}
	ndevices = cfg->ndevs;
}

/* ---- the sysfs tree ------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int write_file(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	int fd;

	pathf(path, sizeof(path), "%s/%s", dir, name);
	/* New, never through a link, and writable by no one else: the tree must vet. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) ? -errno : 0;
}

/* The published counters of d, where its ports/1/hw_counters leads; values already
 * there stay. */
static int make_counters(const struct sefa_device *d)
{
	const struct sefa_config *cfg = sefa_config_get();
	char dir[PATH_MAX], addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &cfg->addr, addr, sizeof(addr));
	pathf(dir, sizeof(dir), "%s/counters/%s/%s", sefa_sysfs_root(), addr, d->ibdev.name);
	return sefa_mkdirs_755(dir) | net_efa_publish_init(dir);
}

/*
 * hw_counters. The device-level ones count admin commands, which softefa has none of:
 * fixed zeros in the tree. The port's move, and the tree never changes: ports/1/
 * hw_counters is a link out of the tree to $SOFTEFA_SYSFS_DIR/counters/<address>/efa_N,
 * which the engines of that device keep current (src/net/stats.c, docs/sysfs.md). The
 * link is relative so it holds wherever the tree is built or renamed within the root.
 */
static int build_hw_counters(const char *dev_dir, const struct sefa_device *d)
{
	const struct sefa_config *cfg = sefa_config_get();
	char dir[PATH_MAX], link[PATH_MAX], target[128], addr[INET_ADDRSTRLEN];
	int err = make_counters(d);

	inet_ntop(AF_INET, &cfg->addr, addr, sizeof(addr));
	snprintf(target, sizeof(target), "../../../../../../counters/%s/%s", addr, d->ibdev.name);
	pathf(link, sizeof(link), "%s/ports/1/hw_counters", dev_dir);
	if (symlink(target, link))
		err |= -errno;

	pathf(dir, sizeof(dir), "%s/hw_counters", dev_dir);
	err |= sefa_mkdirs_755(dir);
	for (unsigned i = 0; i < NET_EFA_DEV_COUNTERS; i++)
		err |= write_file(dir, net_efa_dev_names[i], "0\n");
	err |= write_file(dir, "lifespan", "10\n");
	return err;
}

static int build_device(const char *root, const struct sefa_device *d)
{
	char dir[PATH_MAX], pci[64], link[PATH_MAX];
	uint64_t g = be64toh(d->guid);
	char guid[32];
	int err = 0;

	snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
	         (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
	/* A PCI function per device: libfabric parses the name as a PCI address. */
	snprintf(pci, sizeof(pci), "0000:00:%02x.0", 0x10 + d->index);

	pathf(dir, sizeof(dir), "%s/devices/pci0000:00/%s", root, pci);
	err |= sefa_mkdirs_755(dir);
	err |= write_file(dir, "vendor", "0x%04x\n", SEFA_VENDOR_ID);
	err |= write_file(dir, "device", "0x%04x\n", SEFA_VENDOR_PART_ID);
	err |= write_file(dir, "numa_node", "-1\n");
	pathf(link, sizeof(link), "%s/driver", dir);
	if (symlink("../../../bus/pci/drivers/efa", link))
		err |= -errno;

	pathf(dir, sizeof(dir), "%s/class/infiniband/%s", root, d->ibdev.name);
	err |= sefa_mkdirs_755(dir);
	pathf(link, sizeof(link), "%s/device", dir);
	{
		char target[128];

		snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", pci);
		if (symlink(target, link))
			err |= -errno;
	}
	err |= write_file(dir, "node_type", "%d: <unknown>\n", IBV_NODE_UNSPECIFIED);
	err |= write_file(dir, "node_guid", "%s\n", guid);
	err |= write_file(dir, "sys_image_guid", "0000:0000:0000:0000\n"); /* as EFA: unset */
	err |= write_file(dir, "fw_ver", "0.1.0.0\n");
	err |= write_file(dir, "hw_rev", "0x%x\n", SEFA_VENDOR_PART_ID);
	err |= write_file(dir, "board_id", "softefa\n");
	err |= write_file(dir, "node_desc", "softefa %s\n", d->ibdev.name);

	pathf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/1", root, d->ibdev.name);
	err |= sefa_mkdirs_755(dir);
	err |= write_file(dir, "state", "4: ACTIVE\n");
	err |= write_file(dir, "phys_state", "5: LinkUp\n");
	err |= write_file(dir, "rate", "100 Gb/sec (4X EDR)\n");
	err |= write_file(dir, "lid", "0x0\n");
	err |= write_file(dir, "sm_lid", "0x0\n");
	err |= write_file(dir, "lid_mask_count", "0\n");
	err |= write_file(dir, "link_layer", "Unspecified\n");
	pathf(dir, sizeof(dir), "%s/class/infiniband/%s", root, d->ibdev.name);
	err |= build_hw_counters(dir, d);

	pathf(dir, sizeof(dir), "%s/class/infiniband_verbs/%s", root, d->ibdev.dev_name);
	err |= sefa_mkdirs_755(dir);
	err |= write_file(dir, "ibdev", "%s\n", d->ibdev.name);
	err |= write_file(dir, "abi_version", "1\n");
	return err;
}

static int build_tree(const char *root)
{
	char dir[PATH_MAX];
	int err = 0;

	pathf(dir, sizeof(dir), "%s/bus/pci/drivers/efa", root);
	err |= sefa_mkdirs_755(dir);
	pathf(dir, sizeof(dir), "%s/class/infiniband_verbs", root);
	err |= sefa_mkdirs_755(dir);
	err |= write_file(dir, "abi_version", "6\n");
	/*
	 * The host's id where an EC2 instance has it, for libfabric's efa provider (it
	 * names the host in its handshakes and error messages; softefa run points
	 * FI_EFA_HOST_ID_FILE here): "i-0" and 16 hex digits, 5efa0000 and the IPv4
	 * address, so unique among the hosts that can reach each other, as the GUIDs are.
	 */
	pathf(dir, sizeof(dir), "%s/%s", root, SOFTEFA_HOST_ID_FILE);
	*strrchr(dir, '/') = '\0';
	err |= sefa_mkdirs_755(dir);
	err |= write_file(dir, strrchr(SOFTEFA_HOST_ID_FILE, '/') + 1, "i-05efa0000%08x\n",
	                  ntohl(sefa_config_get()->addr.s_addr));
	for (unsigned i = 0; i < ndevices; i++)
		err |= build_device(root, &devices[i]);
	/* Last: a tree with its stamp is whole (it is renamed into place only then). */
	err |= write_file(root, SYSFS_STAMP, "%s %u devices, GUIDs of %s\n", SYSFS_FORMAT, ndevices,
	                  strrchr(tree_dir, '-') + 1);
	return err;
}

/*
 * Build directories of processes that died half-way are removed by the next builder. A
 * builder holds a lock on its directory until it is renamed in, and the lock goes with
 * the process whichever PID namespace it lives in; a directory is only taken for
 * abandoned when nobody holds its lock and it is older than any build takes.
 */
static void remove_dead_builds(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];
		struct stat st;
		int fd;

		if (strncmp(de->d_name, ".build.", 7))
			continue;
		pathf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		fd = open(sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && now - st.st_mtime > 10 && !flock(fd, LOCK_EX | LOCK_NB))
			sefa_rm_tree(sub);
		close(fd);
	}
	closedir(d);
}

/* No tree this process can vouch for: the devices point at none. */
static void tree_off(void)
{
	tree_ok = false;
	sefa_log(SEFA_LOG_ERROR, "no sysfs tree for this process: sysfs readers see no device");
	for (unsigned i = 0; i < ndevices; i++) {
		devices[i].ibdev.ibdev_path[0] = '\0';
		devices[i].ibdev.dev_path[0] = '\0';
	}
}

/*
 * What is in place at root/sub, vetted (src/util/fs.h) before anything in it is
 * trusted: 1 when it vets (and, with stamp, holds that file: it is whole), 0 when there
 * is none, -1 when it was refused. A refused one is said in one line and set aside
 * (renamed within root, which is ours, then removed) so that a new one can be made.
 */
static int in_place(const char *root, const char *sub, const char *what, const char *stamp)
{
	static unsigned seq;
	char path[PATH_MAX], aside[PATH_MAX];
	struct sefa_unsafe u;
	struct stat st;
	int err = sefa_vet_tree(root, sub, &u);

	pathf(path, sizeof(path), "%s/%s", root, sub);
	if (err == -ENOENT)
		return 0;
	if (!err && stamp) {
		pathf(aside, sizeof(aside), "%s/%s", path, stamp);
		if (lstat(aside, &st) || !S_ISREG(st.st_mode)) {
			err = -EPERM;
			snprintf(u.path, sizeof(u.path), "%s", path);
			snprintf(u.why, sizeof(u.why), "has no %s file (it is not whole)", stamp);
		}
	}
	if (!err)
		return 1;
	if (err == -EPERM)
		sefa_log(SEFA_LOG_ERROR, "refusing the %s at %s: %s %s; making a new one", what,
		         path, u.path, u.why);
	else
		sefa_log(SEFA_LOG_ERROR, "refusing the %s at %s: %s; making a new one", what, path,
		         strerror(-err));
	pathf(aside, sizeof(aside), "%s/.bad.%d.%u", root, (int)getpid(), seq++);
	if (!rename(path, aside))
		sefa_rm_tree(aside);
	return -1;
}

/* Builds the tree at tmp (a fresh directory) and renames it into place; 0 or -1. */
static int build_and_place(const char *tmp)
{
	int lock = -1;

	sefa_rm_tree(tmp);
	if (sefa_mkdirs_755(tmp) ||
	    (lock = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    flock(lock, LOCK_EX) || build_tree(tmp)) {
		sefa_log(SEFA_LOG_WARN, "could not build the sysfs tree under %s", tmp);
		sefa_rm_tree(tmp);
		if (lock >= 0)
			close(lock);
		return -1;
	}
	if (rename(tmp, tree_dir)) {
		/* Another process put its (identical) tree there first. */
		if (errno != EEXIST && errno != ENOTEMPTY)
			sefa_log(SEFA_LOG_WARN, "could not put the sysfs tree at %s: %s", tree_dir,
			         strerror(errno));
		sefa_rm_tree(tmp);
	}
	close(lock);
	return 0;
}

/*
 * Builds this configuration's tree beside its final place and renames it in, unless
 * one is there already and vets. A tree in place is never changed: another process may
 * be reading it, and it holds exactly what this one would write. Two builders racing
 * both build; the first rename wins and the other's copy is thrown away. Whichever
 * tree ends up in place is vetted before its paths are handed out; if none vets, the
 * devices have no sysfs paths at all rather than paths into a tree nobody checked.
 */
static void sysfs_build(void)
{
	const struct sefa_config *cfg = sefa_config_get();
	const char *root = sefa_sysfs_root();
	char tmp[PATH_MAX], counters[64], addr[INET_ADDRSTRLEN];
	const char *key;

	if (!ndevices || !tree_dir[0])
		return;
	key = strrchr(tree_dir, '/') + 1;
	inet_ntop(AF_INET, &cfg->addr, addr, sizeof(addr));
	snprintf(counters, sizeof(counters), "counters/%s", addr);
	in_place(root, counters, "published counters", NULL);
	tree_ok = in_place(root, key, "sysfs tree", SYSFS_STAMP) == 1;
	if (tree_ok) {
		/* The counters its links lead to, again if they were refused. */
		for (unsigned i = 0; i < ndevices; i++)
			make_counters(&devices[i]);
	} else {
		remove_dead_builds(root);
		pathf(tmp, sizeof(tmp), "%s/.build.%s.%d", root, key, (int)getpid());
		tree_ok =
		    !build_and_place(tmp) && in_place(root, key, "sysfs tree", SYSFS_STAMP) == 1;
	}
	if (!tree_ok || in_place(root, counters, "published counters", NULL) < 0)
		tree_off();
}

static pthread_once_t sysfs_once = PTHREAD_ONCE_INIT;

void sefa_sysfs_ensure(void)
{
	pthread_once(&sysfs_once, sysfs_build);
}

/* ---- exported entry points ------------------------------------------------ */

SEFA_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;

	pthread_once(&devices_once, devices_init);
	sefa_sysfs_ensure();
	list = calloc(ndevices + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < ndevices; i++)
		list[i] = &devices[i].ibdev;
	if (num_devices)
		*num_devices = (int)ndevices;
	return list;
}

SEFA_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

SEFA_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

SEFA_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (!sefa_is_our_device(device))
		return 0;
	return ((struct sefa_device *)device)->guid;
}

SEFA_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	if (!sefa_is_our_device(device))
		return -1;
	return (int)((struct sefa_device *)device)->index;
}

/* For the softefa tool (SOFTEFA_PRIVATE_1): this configuration's sysfs tree (what
 * SYSFS_PATH should name; "" when there is none that vets); and where state is kept
 * (src/util/rundir.h). */
SEFA_EXPORT const char *softefa_sysfs_dir(void)
{
	pthread_once(&devices_once, devices_init);
	sefa_sysfs_ensure();
	return tree_ok ? tree_dir : "";
}

SEFA_EXPORT const char *softefa_run_dir(void)
{
	return sefa_run_dir();
}

/* Before the first call: configuration errors are left for the program the tool runs
 * (src/util/log.h). */
SEFA_EXPORT void softefa_quiet_config(void)
{
	sefa_log_config_quiet = true;
}
