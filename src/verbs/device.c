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
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fs.h"
#include "../util/log.h"
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

#define SYSFS_STAMP "softefa-sysfs-v1"

bool sefa_is_our_device(const struct ibv_device *dev)
{
	const struct sefa_device *d = (const struct sefa_device *)dev;

	return d >= devices && d < devices + SEFA_MAX_DEVICES;
}

bool sefa_is_our_context(const struct ibv_context *ctx)
{
	return ctx && sefa_is_our_device(ctx->device);
}

static void devices_init(void)
{
	const struct sefa_config *cfg = sefa_config_get();
	uint32_t ip = ntohl(cfg->addr.s_addr);

	if (!sefa_config_valid())
		return;
	for (unsigned i = 0; i < cfg->ndevs; i++) {
		struct sefa_device *d = &devices[i];

		d->index = i;
		d->ibdev.node_type = IBV_NODE_UNSPECIFIED;
		d->ibdev.transport_type = IBV_TRANSPORT_UNSPECIFIED;
		snprintf(d->ibdev.name, sizeof(d->ibdev.name), "efa_%u", i);
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%u", i);
		pathf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
		      "%s/class/infiniband_verbs/uverbs%u", cfg->sysfs_dir, i);
		pathf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
		      "%s/class/infiniband/efa_%u", cfg->sysfs_dir, i);
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

	pathf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) ? -errno : 0;
}

static void rm_rf(const char *path)
{
	struct dirent *de;
	char sub[PATH_MAX];
	DIR *d = opendir(path);

	if (!d) {
		unlink(path);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		pathf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode))
			rm_rf(sub);
		else
			unlink(sub);
	}
	closedir(d);
	rmdir(path);
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
	err |= write_file(dir, "sys_image_guid", "%s\n", guid);
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
	for (unsigned i = 0; i < ndevices; i++)
		err |= build_device(root, &devices[i]);
	err |= write_file(root, SYSFS_STAMP, "%u %08x\n", ndevices,
	                  (unsigned)sefa_config_get()->addr.s_addr);
	return err;
}

static bool tree_current(const char *root)
{
	char path[PATH_MAX];
	unsigned n = 0, ip = 0;
	FILE *f;
	bool ok;

	pathf(path, sizeof(path), "%s/%s", root, SYSFS_STAMP);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* GUIDs in the tree carry the address: a tree for another one is rebuilt. */
	ok = fscanf(f, "%u %x", &n, &ip) == 2 && n == ndevices &&
	     ip == (unsigned)sefa_config_get()->addr.s_addr;
	fclose(f);
	return ok;
}

/*
 * Builds the tree beside its final place and renames it in, so concurrent processes
 * never see half a tree. The content depends only on the device count and address,
 * both recorded in the stamp file.
 */
static void sysfs_build(void)
{
	const struct sefa_config *cfg = sefa_config_get();
	char tmp[PATH_MAX], old[PATH_MAX], parent[PATH_MAX];
	char *slash;

	if (!ndevices || tree_current(cfg->sysfs_dir))
		return;
	/* The default tree lives in the per-user run directory: vet it first. */
	if (!strncmp(cfg->sysfs_dir, cfg->run_dir, strlen(cfg->run_dir)) &&
	    sefa_private_dir(cfg->run_dir))
		return;
	pathf(parent, sizeof(parent), "%s", cfg->sysfs_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		sefa_mkdirs_755(parent);
	}
	pathf(tmp, sizeof(tmp), "%s.tmp.%d", cfg->sysfs_dir, (int)getpid());
	pathf(old, sizeof(old), "%s.old.%d", cfg->sysfs_dir, (int)getpid());
	rm_rf(tmp);
	if (sefa_mkdirs_755(tmp) || build_tree(tmp)) {
		sefa_log(SEFA_LOG_WARN, "could not build the sysfs tree under %s", tmp);
		rm_rf(tmp);
		return;
	}
	if (rename(tmp, cfg->sysfs_dir)) {
		/* An older tree is there: move it aside, then put ours in its place. */
		if (tree_current(cfg->sysfs_dir) || rename(cfg->sysfs_dir, old) ||
		    rename(tmp, cfg->sysfs_dir))
			rm_rf(tmp);
		rm_rf(old);
	}
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

/* For the softefa tool (SOFTEFA_PRIVATE_1): where this process keeps its state. */
SEFA_EXPORT const char *softefa_sysfs_dir(void)
{
	return sefa_config_get()->sysfs_dir;
}

SEFA_EXPORT const char *softefa_run_dir(void)
{
	return sefa_config_get()->run_dir;
}
