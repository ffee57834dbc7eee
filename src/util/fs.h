/* SPDX-License-Identifier: MIT */
/*
 * Directories the library creates for its state (stats files, the sysfs tree), and the
 * checks that keep another local user out of them (docs/security.md): whatever sits in
 * a place others could have written is refused before it is read or trusted.
 */
#ifndef SOFTEFA_UTIL_FS_H
#define SOFTEFA_UTIL_FS_H

#include <limits.h>
#include <sys/types.h>

/* mkdir -p with the given mode for every component created. 0 or -errno. */
int sefa_mkdirs(const char *path, mode_t mode);

/* What a check refused, for the one line that tells the user: the entry and why. */
struct sefa_unsafe {
	char path[PATH_MAX];
	char why[160];
};

/*
 * Vets one directory: a real directory (not a symlink), owned by getuid(), writable by
 * nobody else. 0; -EPERM when it is not safe (*u says why); -errno when it cannot be
 * looked at (-ENOENT when absent).
 */
int sefa_vet_dir(const char *path, struct sefa_unsafe *u);

/*
 * Vets the directories above path: each of its real path owned by root or us, and
 * writable by others only when sticky (as /tmp), and each symlink on the way as
 * written root's or ours, so nobody else can rename path away or put another in its
 * place. 0, -EPERM (*u says why) or -errno.
 */
int sefa_vet_parents(const char *path, struct sefa_unsafe *u);

/*
 * Vets root, each directory of sub below it (sub may be "" for root alone), and all
 * that is under root/sub: directories as sefa_vet_dir, regular files owned by us and
 * writable by nobody else, symlinks owned by us whose target is relative and stays
 * inside root; anything else (a FIFO, a socket, a device) is refused. Nothing is
 * opened but directories, so a planted FIFO cannot block it. 0, -EPERM (*u says why)
 * or -errno (-ENOENT when root/sub is absent).
 */
int sefa_vet_tree(const char *root, const char *sub, struct sefa_unsafe *u);

/*
 * Creates (if needed) and vets a private per-user directory: it must be a real
 * directory (not a symlink), owned by us and writable by nobody else, or another
 * local user could make us write through it. 0 or -errno (-EPERM when unsafe, said in
 * an error log line).
 */
int sefa_private_dir(const char *path);

/*
 * Opens a file to read what it holds: never through a symlink (O_NOFOLLOW), never
 * blocking on a FIFO (O_NONBLOCK, cleared once it is known to be a regular file),
 * O_CLOEXEC; and only a regular file owned by us and writable by nobody else. flags
 * are open(2)'s (O_RDONLY, O_RDWR, O_CREAT ...); mode is used when O_CREAT creates it.
 * The fd, or -errno: -ELOOP for a symlink, -EPERM for anything else not safe.
 */
int sefa_open_ours(const char *path, int flags, mode_t mode);

/*
 * Opens or creates (flags as open(2), O_CREAT with mode) a file in a private
 * directory: its directory must vet as sefa_vet_dir does, the file is opened with
 * O_NOFOLLOW relative to that directory, and must be a regular file owned by us;
 * when mode gives group and others nothing (0600), the file must give them nothing
 * either, whoever made it. For secrets. The fd (O_CLOEXEC), or -errno: -EPERM when
 * the directory or the file is not safe, -ELOOP for a symlink, others from open(2).
 */
int sefa_private_file_open(const char *path, int flags, mode_t mode);

/* Removes path and everything below it, never following a symlink. */
void sefa_rm_tree(const char *path);

#endif
