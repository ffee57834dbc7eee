// SPDX-License-Identifier: MIT
/*
 * The provider interface of libibverbs (IBVERBS_PRIVATE_34). Only provider libraries
 * call it, and Debian's providers (libmlx5, ...) are loaded BIND_NOW beside perftest,
 * pyverbs and libfabric, so every symbol they import must resolve. No provider ever
 * sees a device of ours: each of these fails cleanly with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define SEFA_EXPORT __attribute__((visibility("default")))

/* Untyped on purpose: these symbols only need to resolve; the body sets errno. */
#define STUB_INT(name)              \
	SEFA_EXPORT int name(void); \
	int name(void)              \
	{                           \
		errno = EOPNOTSUPP; \
		return EOPNOTSUPP;  \
	}
#define STUB_MINUS1(name)           \
	SEFA_EXPORT int name(void); \
	int name(void)              \
	{                           \
		errno = EOPNOTSUPP; \
		return -1;          \
	}
#define STUB_PTR(name)                \
	SEFA_EXPORT void *name(void); \
	void *name(void)              \
	{                             \
		errno = EOPNOTSUPP;   \
		return NULL;          \
	}
#define STUB_VOID(name)              \
	SEFA_EXPORT void name(void); \
	void name(void)              \
	{                            \
	}

/* Providers registering with libibverbs (libmlx5's constructor does): accepted, ignored. */
STUB_VOID(ibv_register_driver)
STUB_VOID(verbs_register_driver_34)

/* The provider interface (IBVERBS_PRIVATE_34). */
STUB_PTR(_verbs_init_and_alloc_context)
STUB_PTR(verbs_open_device)
STUB_VOID(verbs_set_ops)
STUB_VOID(verbs_uninit_context)
STUB_VOID(verbs_init_cq)
STUB_VOID(__verbs_log)
STUB_INT(execute_ioctl)
STUB_INT(__ioctl_final_num_attrs)
STUB_MINUS1(ibv_read_ibdev_sysfs_file)
STUB_INT(ibv_cmd_advise_mr)
STUB_INT(ibv_cmd_alloc_dm)
STUB_INT(ibv_cmd_alloc_mw)
STUB_INT(ibv_cmd_alloc_pd)
STUB_INT(ibv_cmd_attach_mcast)
STUB_INT(ibv_cmd_close_xrcd)
STUB_INT(ibv_cmd_create_ah)
STUB_INT(ibv_cmd_create_counters)
STUB_INT(ibv_cmd_create_cq)
STUB_INT(ibv_cmd_create_cq_ex)
STUB_INT(ibv_cmd_create_flow)
STUB_INT(ibv_cmd_create_flow_action_esp)
STUB_INT(ibv_cmd_create_qp)
STUB_INT(ibv_cmd_create_qp_ex)
STUB_INT(ibv_cmd_create_qp_ex2)
STUB_INT(ibv_cmd_create_rwq_ind_table)
STUB_INT(ibv_cmd_create_srq)
STUB_INT(ibv_cmd_create_srq_ex)
STUB_INT(ibv_cmd_create_wq)
STUB_INT(ibv_cmd_dealloc_mw)
STUB_INT(ibv_cmd_dealloc_pd)
STUB_INT(ibv_cmd_dereg_mr)
STUB_INT(ibv_cmd_destroy_ah)
STUB_INT(ibv_cmd_destroy_counters)
STUB_INT(ibv_cmd_destroy_cq)
STUB_INT(ibv_cmd_destroy_flow)
STUB_INT(ibv_cmd_destroy_flow_action)
STUB_INT(ibv_cmd_destroy_qp)
STUB_INT(ibv_cmd_destroy_rwq_ind_table)
STUB_INT(ibv_cmd_destroy_srq)
STUB_INT(ibv_cmd_destroy_wq)
STUB_INT(ibv_cmd_detach_mcast)
STUB_INT(ibv_cmd_free_dm)
STUB_INT(ibv_cmd_get_context)
STUB_INT(ibv_cmd_modify_cq)
STUB_INT(ibv_cmd_modify_flow_action_esp)
STUB_INT(ibv_cmd_modify_qp)
STUB_INT(ibv_cmd_modify_qp_ex)
STUB_INT(ibv_cmd_modify_srq)
STUB_INT(ibv_cmd_modify_wq)
STUB_INT(ibv_cmd_open_qp)
STUB_INT(ibv_cmd_open_xrcd)
STUB_INT(ibv_cmd_poll_cq)
STUB_INT(ibv_cmd_post_recv)
STUB_INT(ibv_cmd_post_send)
STUB_INT(ibv_cmd_post_srq_recv)
STUB_INT(ibv_cmd_query_context)
STUB_INT(ibv_cmd_query_device_any)
STUB_INT(ibv_cmd_query_mr)
STUB_INT(ibv_cmd_query_port)
STUB_INT(ibv_cmd_query_qp)
STUB_INT(ibv_cmd_query_srq)
STUB_INT(ibv_cmd_read_counters)
STUB_INT(ibv_cmd_reg_dm_mr)
STUB_INT(ibv_cmd_reg_dmabuf_mr)
STUB_INT(ibv_cmd_reg_mr)
STUB_INT(ibv_cmd_req_notify_cq)
STUB_INT(ibv_cmd_rereg_mr)
STUB_INT(ibv_cmd_resize_cq)

/* A data object in the real library (a bool providers read). */
SEFA_EXPORT bool verbs_allow_disassociate_destroy;
