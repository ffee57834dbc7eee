// SPDX-License-Identifier: MIT
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* Deeper than any tree the library builds: a walk or a removal stops there. */
#define SEFA_TREE_DEPTH 24

int sefa_mkdirs(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* ---- saying what is wrong ------------------------------------------------------------ */

static const char *kind_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISREG(m))
		return "a regular file";
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "a device node";
}

/* "uid 1001 (alice)": the owner as the user will recognise it. */
static void owner_name(uid_t uid, char *out, size_t cap)
{
	struct passwd pw, *found = NULL;
	char buf[1024];

	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &found) && found)
		snprintf(out, cap, "uid %u (%s)", (unsigned)uid, found->pw_name);
	else
		snprintf(out, cap, "uid %u", (unsigned)uid);
}

static int refuse(struct sefa_unsafe *u, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(struct sefa_unsafe *u, const char *path, const char *fmt, ...)
{
	va_list ap;

	snprintf(u->path, sizeof(u->path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
	return -EPERM;
}

/*
 * The one rule for what we trust: of the kind expected (S_IFDIR, S_IFREG, S_IFLNK),
 * ours, and (but for a symlink, whose mode means nothing) writable by nobody else.
 */
static int vet_stat(const struct stat *st, mode_t want, const char *path, struct sefa_unsafe *u)
{
	char who[96];

	if ((st->st_mode & S_IFMT) != want)
		return refuse(u, path, "is %s, not %s", kind_name(st->st_mode), kind_name(want));
	if (st->st_uid != getuid()) {
		owner_name(st->st_uid, who, sizeof(who));
		return refuse(u, path, "belongs to %s, not to you (uid %u)", who,
		              (unsigned)getuid());
	}
	if (want != S_IFLNK && (st->st_mode & 022))
		return refuse(u, path, "is writable by others (mode %04o)",
		              (unsigned)(st->st_mode & 07777));
	return 0;
}

/* ---- directories ---------------------------------------------------------------------- */

/* A symlink where a directory should be: where it leads and whose it is. */
static int refuse_link(int dfd, const char *name, const struct stat *st, const char *path,
                       struct sefa_unsafe *u)
{
	char target[96] = "?", who[96];
	ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);

	if (n >= 0)
		target[n] = '\0';
	owner_name(st->st_uid, who, sizeof(who));
	return refuse(u, path, "is a symbolic link (to %s, made by %s), not a directory", target,
	              who);
}

/*
 * Opens name (relative to dfd) as a directory that vets, never through a symlink: the
 * fd, -EPERM (*u says why; shown as path) or -errno. What cannot be opened (a symlink,
 * another user's private directory) is looked at without following it, to say why.
 */
static int open_dir_vetted(int dfd, const char *name, const char *path, struct sefa_unsafe *u)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err;

	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
			return err;
		if (S_ISLNK(st.st_mode))
			return refuse_link(dfd, name, &st, path, u);
		return vet_stat(&st, S_IFDIR, path, u) ? -EPERM : err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	err = vet_stat(&st, S_IFDIR, path, u);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int sefa_vet_dir(const char *path, struct sefa_unsafe *u)
{
	int fd = open_dir_vetted(AT_FDCWD, path, path, u);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* One directory above a path we keep state in: root's or ours, and if others may
 * write in it, sticky (they cannot rename or remove what is ours there). */
static int vet_parent(const char *dir, struct sefa_unsafe *u)
{
	struct stat st;
	char who[96];

	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return refuse(u, dir, "is %s, not a directory", kind_name(st.st_mode));
	if (st.st_uid != 0 && st.st_uid != getuid()) {
		owner_name(st.st_uid, who, sizeof(who));
		return refuse(u, dir, "belongs to %s", who);
	}
	if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
		return refuse(u, dir, "is writable by others and not sticky (mode %04o)",
		              (unsigned)(st.st_mode & 07777));
	return 0;
}

/* path's directory: "." for a bare name, "/" for a name at the root. */
static int dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return snprintf(out, cap, ".") >= (int)cap ? -ENAMETOOLONG : 0;
	return snprintf(out, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path) >= (int)cap
	           ? -ENAMETOOLONG
	           : 0;
}

/* Runs check on each prefix of path that ends a component ("/a", "/a/b", ...), the
 * shortest first, until one fails; path is put back as it was. */
static int each_prefix(char *path, int (*check)(const char *, struct sefa_unsafe *),
                       struct sefa_unsafe *u)
{
	int err = 0;

	for (size_t i = 1; !err && path[i - 1]; i++) {
		char c = path[i];

		if (c != '/' && c != '\0')
			continue;
		path[i] = '\0';
		err = check(path, u);
		path[i] = c;
	}
	return err;
}

/* A symlink on the way, as written, must be root's or ours: its maker can point it
 * elsewhere (in /tmp, only its maker can replace it). */
static int link_ours(const char *dir, struct sefa_unsafe *u)
{
	struct stat st;
	char who[96];

	if (lstat(dir, &st) || !S_ISLNK(st.st_mode) || st.st_uid == 0 || st.st_uid == getuid())
		return 0;
	owner_name(st.st_uid, who, sizeof(who));
	return refuse(u, dir, "is a symbolic link made by %s", who);
}

int sefa_vet_parents(const char *path, struct sefa_unsafe *u)
{
	char parent[PATH_MAX], real[PATH_MAX];
	int err = dir_of(path, parent, sizeof(parent));

	if (!err)
		err = each_prefix(parent, link_ours, u);
	if (err)
		return err;
	if (!realpath(parent, real))
		return -errno;
	/* Then every directory of the real path, where no symlink is left. */
	err = vet_parent("/", u);
	return err ? err : each_prefix(real, vet_parent, u);
}

int sefa_private_dir(const char *path)
{
	struct sefa_unsafe u;
	int err = sefa_mkdirs(path, 0700);

	if (err)
		return err;
	err = sefa_vet_dir(path, &u);
	if (err == -EPERM)
		sefa_log(SEFA_LOG_ERROR, "%s %s: not using it", u.path, u.why);
	return err;
}

/* ---- trees -------------------------------------------------------------------------- */

/* Whether a symlink's target, read in a directory depth levels below the root, stays
 * inside the root: relative, and never more ".." than levels it went down. */
static int link_stays_inside(const char *target, unsigned depth)
{
	const char *p = target;

	if (!*p || *p == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && !strncmp(p, "..", 2)) {
			if (depth == 0)
				return 0;
			depth--;
		} else if (n && !(n == 1 && *p == '.')) {
			depth++;
		}
		p += n;
		p += *p == '/';
	}
	return 1;
}

static int vet_dir_entries(int dfd, char *path, size_t cap, unsigned depth, struct sefa_unsafe *u);

/* One entry of a directory being vetted; path is its path, for messages. */
static int vet_entry(int dfd, const char *name, char *path, size_t cap, unsigned depth,
                     struct sefa_unsafe *u)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	/* One that went while we looked (a counter replaced by rename) is not there to
	 * be read. */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode))
		return vet_stat(&st, S_IFREG, path, u);
	if (S_ISLNK(st.st_mode)) {
		if (vet_stat(&st, S_IFLNK, path, u))
			return -EPERM;
		n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (!link_stays_inside(target, depth))
			return refuse(u, path, "links out of the tree (to %s)", target);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return vet_stat(&st, S_IFREG, path, u);
	if (depth + 1 > SEFA_TREE_DEPTH)
		return refuse(u, path, "is nested deeper than any tree softefa makes");
	fd = open_dir_vetted(dfd, name, path, u);
	if (fd < 0)
		return fd;
	return vet_dir_entries(fd, path, cap, depth + 1, u);
}

/* Vets everything in the directory open at dfd (which it closes), depth levels below
 * the root; path holds the directory's path and is put back as it was. */
static int vet_dir_entries(int dfd, char *path, size_t cap, unsigned depth, struct sefa_unsafe *u)
{
	size_t len = strlen(path);
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int err = 0;

	if (!d) {
		err = -errno;
		close(dfd);
		return err;
	}
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path + len, cap - len, "/%s", de->d_name) >= (int)(cap - len))
			err = -ENAMETOOLONG;
		else
			err = vet_entry(dirfd(d), de->d_name, path, cap, depth, u);
		path[len] = '\0';
	}
	closedir(d);
	return err;
}

int sefa_vet_tree(const char *root, const char *sub, struct sefa_unsafe *u)
{
	char path[PATH_MAX], part[NAME_MAX + 1];
	unsigned depth = 0;
	int fd, next;

	if (snprintf(path, sizeof(path), "%s", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open_dir_vetted(AT_FDCWD, root, path, u);
	/* Down sub one component at a time, each one a directory that vets. */
	for (const char *p = sub; fd >= 0 && *p; p += *p == '/') {
		size_t n = strcspn(p, "/"), len = strlen(path);

		if (n >= sizeof(part) || len + 1 + n >= sizeof(path)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(part, p, n);
		part[n] = '\0';
		p += n;
		if (!n)
			continue;
		snprintf(path + len, sizeof(path) - len, "/%s", part);
		next = open_dir_vetted(fd, part, path, u);
		close(fd);
		fd = next;
		depth++;
	}
	if (fd < 0)
		return fd;
	return vet_dir_entries(fd, path, sizeof(path), depth, u);
}

/* ---- files ------------------------------------------------------------------------- */

/* The checks on a file just opened at fd (closed when they fail): the fd or -EPERM. */
static int file_vetted(int fd, int flags, int private_mode)
{
	struct stat st;
	struct sefa_unsafe u;

	if (fstat(fd, &st) || vet_stat(&st, S_IFREG, "", &u) ||
	    (private_mode && (st.st_mode & 077))) {
		close(fd);
		return -EPERM;
	}
	/* Known to be a regular file: blocking or not means nothing now, give the caller
	 * what it asked for. */
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int sefa_open_ours(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);

	if (fd < 0)
		return -errno;
	return file_vetted(fd, flags, 0);
}

int sefa_private_file_open(const char *path, int flags, mode_t mode)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct sefa_unsafe u;
	int dfd, fd;

	if (dir_of(path, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	if (!*base)
		return -EISDIR;
	dfd = open_dir_vetted(AT_FDCWD, dir, dir, &u);
	if (dfd < 0)
		return dfd;
	/* Relative to the directory just vetted: nothing can be swapped in between. */
	fd = openat(dfd, base, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	close(dfd);
	if (fd < 0)
		return -errno;
	return file_vetted(fd, flags, !(mode & 077));
}

/* ---- removal ------------------------------------------------------------------------ */

static void rm_at(int dfd, const char *name, unsigned depth)
{
	int fd =
	    depth < SEFA_TREE_DEPTH
	        ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
	        : -1;
	struct dirent *de;
	DIR *d;

	if (fd < 0) {
		unlinkat(dfd, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rm_at(dirfd(d), de->d_name, depth + 1);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void sefa_rm_tree(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dfd = AT_FDCWD;

	if (slash) {
		if (dir_of(path, dir, sizeof(dir)))
			return;
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return;
	}
	rm_at(dfd, slash ? slash + 1 : path, 0);
	if (dfd != AT_FDCWD)
		close(dfd);
}
