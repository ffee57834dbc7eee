// SPDX-License-Identifier: MIT
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "log.h"
#include "rundir.h"

#define HEX_LEN (2 * SEFA_SECRET_LEN)

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Reads a key file: a regular file of ours that nobody else may read (a secret
 * others can read is no secret), holding 64 hex digits and nothing but white space.
 */
static int read_key(const char *path, uint8_t key[SEFA_SECRET_LEN])
{
	char buf[HEX_LEN + 64];
	struct stat st;
	ssize_t n;
	int fd = sefa_private_file_open(path, O_RDONLY, 0);

	if (fd == -EPERM)
		sefa_log(SEFA_LOG_ERROR,
		         "key file %s is not a private regular file of this user (mode 0600 or "
		         "0400, in a directory of theirs others cannot write)",
		         path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (st.st_mode & 077)) {
		sefa_log(SEFA_LOG_ERROR,
		         "key file %s may be read by others (mode %03o): chmod 600 it", path,
		         (unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	/* The whole file is read: anything past what the buffer holds is not a key. */
	n = st.st_size < (off_t)sizeof(buf) ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (ssize_t i = HEX_LEN; i < n; i++) {
		if (buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r')
			n = -1;
	}
	for (int i = 0; n >= HEX_LEN && i < SEFA_SECRET_LEN; i++) {
		int hi = hexval(buf[2 * i]), lo = hexval(buf[2 * i + 1]);

		if (hi < 0 || lo < 0)
			n = -1;
		else
			key[i] = (uint8_t)(hi << 4 | lo);
	}
	memset(buf, 0, sizeof(buf));
	if (n < HEX_LEN) {
		memset(key, 0, SEFA_SECRET_LEN);
		sefa_log(SEFA_LOG_ERROR, "key file %s does not hold 64 hexadecimal digits", path);
		return -EINVAL;
	}
	return 0;
}

int sefa_secret_create(const char *path)
{
	uint8_t key[SEFA_SECRET_LEN];
	char hex[HEX_LEN + 2];
	int fd, err = 0;

	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		return -EIO;
	for (int i = 0; i < SEFA_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	hex[HEX_LEN] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
	} else {
		errno = 0; /* a short write sets none */
		if (write(fd, hex, HEX_LEN + 1) != HEX_LEN + 1 || fsync(fd))
			err = errno ? -errno : -EIO;
	}
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	memset(key, 0, sizeof(key));
	memset(hex, 0, sizeof(hex));
	return err;
}

/*
 * The run directory's secret, made on first use. Two processes starting at once
 * must end with one secret: each writes its own candidate and links it into place;
 * the first link wins and the loser reads the winner's.
 */
static int run_dir_key(const char *run_dir, uint8_t key[SEFA_SECRET_LEN])
{
	char path[SEFA_PATH_MAX + 16], tmp[SEFA_PATH_MAX + 48];
	int err;

	if (!run_dir[0]) {
		sefa_log(SEFA_LOG_ERROR, "no private run directory for the authentication key: "
		                         "set SOFTEFA_RUN_DIR or SOFTEFA_KEY_FILE");
		return -EPERM;
	}
	snprintf(path, sizeof(path), "%s/auth.key", run_dir);
	err = read_key(path, key);
	if (err != -ENOENT)
		return err;
	snprintf(tmp, sizeof(tmp), "%s/.auth.key.%d", run_dir, (int)getpid());
	unlink(tmp);
	err = sefa_secret_create(tmp);
	if (!err && link(tmp, path) && errno != EEXIST)
		err = -errno;
	unlink(tmp);
	if (err) {
		sefa_log(SEFA_LOG_ERROR, "cannot make the authentication key %s: %s", path,
		         strerror(-err));
		return err;
	}
	return read_key(path, key);
}

int sefa_secret_load(const struct sefa_config *cfg, uint8_t key[SEFA_SECRET_LEN])
{
	int err;

	if (!cfg->key_file[0])
		return run_dir_key(sefa_run_dir(), key);
	err = read_key(cfg->key_file, key);
	if (err == -ENOENT || err == -ELOOP)
		sefa_log(SEFA_LOG_ERROR, "SOFTEFA_KEY_FILE=%s: %s", cfg->key_file,
		         err == -ELOOP ? "a symbolic link (not followed)" : strerror(-err));
	return err;
}
