/* SPDX-License-Identifier: MIT */
/* The context operations installed by ibv_open_device (context.c). */
#ifndef SOFTEFA_VERBS_OPS_H
#define SOFTEFA_VERBS_OPS_H

#include <infiniband/verbs.h>

int sefa_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int sefa_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int sefa_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int sefa_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_cq_ex *sefa_create_cq_ex(struct ibv_context *context,
                                    struct ibv_cq_init_attr_ex *init_attr);
struct ibv_qp *sefa_create_qp_ex(struct ibv_context *context,
                                 struct ibv_qp_init_attr_ex *qp_init_attr_ex);

#endif
