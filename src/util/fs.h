/* SPDX-License-Identifier: MIT */
/* Directories the library creates for its state (stats files, the sysfs tree). */
#ifndef SOFTEFA_UTIL_FS_H
#define SOFTEFA_UTIL_FS_H

#include <sys/types.h>

/* mkdir -p with the given mode for every component created. 0 or -errno. */
int sefa_mkdirs(const char *path, mode_t mode);

/*
 * Creates (if needed) and vets a private per-user directory: it must be a real
 * directory (not a symlink), owned by us and writable by nobody else, or another
 * local user could make us write through it. 0 or -errno (-EPERM when unsafe).
 */
int sefa_private_dir(const char *path);

#endif
