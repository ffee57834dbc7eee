/* SPDX-License-Identifier: MIT */
/* The shared secret that keys authenticated datagrams (docs/security.md). */
#ifndef SOFTEFA_UTIL_SECRET_H
#define SOFTEFA_UTIL_SECRET_H

#include <stdint.h>

#include "config.h"

#define SEFA_SECRET_LEN 32

/*
 * Reads the secret: from SOFTEFA_KEY_FILE when set, else from the run directory's
 * auth.key, made on first use (mode 0600, in a vetted private directory). A key file
 * holds 64 hexadecimal digits; one that others may read, or that is not a regular
 * file of ours, is refused. 0, or -errno with the reason logged.
 */
int sefa_secret_load(const struct sefa_config *cfg, uint8_t key[SEFA_SECRET_LEN]);

/* Writes a new secret to path (which must not exist), mode 0600. 0 or -errno. */
int sefa_secret_create(const char *path);

#endif
