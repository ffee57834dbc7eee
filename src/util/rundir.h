/* SPDX-License-Identifier: MIT */
/*
 * Where this process keeps its state (docs/security.md): the run directory (stats
 * files) and the root of the sysfs trees. Each is used only once it vets as private to
 * us; one that does not is refused with an error line saying why, and a fresh private
 * directory takes its place, so that nothing another user put there is ever read.
 */
#ifndef SOFTEFA_UTIL_RUNDIR_H
#define SOFTEFA_UTIL_RUNDIR_H

/* The run directory in use: $SOFTEFA_RUN_DIR when it vets, else the fallback; "" when
 * there is none at all. */
const char *sefa_run_dir(void);

/* The sysfs root in use: $SOFTEFA_SYSFS_DIR (default <run directory>/sysfs) when it
 * vets, else <fallback>/sysfs; "" when there is none. */
const char *sefa_sysfs_root(void);

/* Where in a device tree the host's id is, as on an EC2 instance (docs/sysfs.md). */
#define SOFTEFA_HOST_ID_FILE "devices/virtual/dmi/id/board_asset_tag"

#endif
