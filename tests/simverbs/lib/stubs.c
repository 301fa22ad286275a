/* Exported libibverbs symbols simverbs does not emulate. They exist so that
 * programs and provider libraries linked with BIND_NOW load; calling one
 * fails cleanly (NULL or an error with errno EOPNOTSUPP), never crashes.
 * Declared without verbs.h: only the return convention matters to callers. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

static int fail_code(void) { errno = EOPNOTSUPP; return EOPNOTSUPP; }
static int fail_minus_one(void) { errno = EOPNOTSUPP; return -1; }
static void* fail_null(void) { errno = EOPNOTSUPP; return NULL; }
static void nothing(void) {}

#define RETURNS_CODE(name) EXPORT int name(void) __attribute__((alias("fail_code")));
#define RETURNS_MINUS_ONE(name) EXPORT int name(void) __attribute__((alias("fail_minus_one")));
#define RETURNS_NULL(name) EXPORT void* name(void) __attribute__((alias("fail_null")));
#define RETURNS_NOTHING(name) EXPORT void name(void) __attribute__((alias("nothing")));

/* public verbs */
RETURNS_NOTHING(ibv_copy_path_rec_from_kern)
RETURNS_NOTHING(ibv_copy_path_rec_to_kern)
RETURNS_NOTHING(ibv_copy_qp_attr_from_kern)
RETURNS_NOTHING(ibv_copy_ah_attr_from_kern)
RETURNS_CODE(ibv_attach_mcast)
RETURNS_CODE(ibv_detach_mcast)
RETURNS_CODE(ibv_resolve_eth_l2_from_gid)
RETURNS_NULL(ibv_import_device)
RETURNS_NULL(ibv_import_mr)
RETURNS_NULL(ibv_import_pd)
RETURNS_NULL(ibv_import_dm)
RETURNS_NOTHING(ibv_unimport_mr)
RETURNS_NOTHING(ibv_unimport_pd)
RETURNS_NOTHING(ibv_unimport_dm)
RETURNS_CODE(ibv_query_ece)
RETURNS_CODE(ibv_set_ece)
RETURNS_NULL(ibv_reg_dmabuf_mr)

/* IBVERBS_PRIVATE_34: what real provider libraries (libmlx5, libefa) import.
 * Their constructors register a driver; simverbs never loads providers. */
RETURNS_NOTHING(verbs_register_driver_34)
RETURNS_NOTHING(__verbs_log)
RETURNS_NOTHING(verbs_set_ops)
RETURNS_NOTHING(verbs_uninit_context)
RETURNS_NOTHING(verbs_init_cq)
RETURNS_NULL(_verbs_init_and_alloc_context)
RETURNS_NULL(verbs_open_device)
RETURNS_CODE(__ioctl_final_num_attrs)
RETURNS_CODE(execute_ioctl)
RETURNS_MINUS_ONE(ibv_read_ibdev_sysfs_file)
RETURNS_CODE(ibv_cmd_advise_mr)
RETURNS_CODE(ibv_cmd_alloc_dm)
RETURNS_CODE(ibv_cmd_alloc_mw)
RETURNS_CODE(ibv_cmd_alloc_pd)
RETURNS_CODE(ibv_cmd_attach_mcast)
RETURNS_CODE(ibv_cmd_close_xrcd)
RETURNS_CODE(ibv_cmd_create_ah)
RETURNS_CODE(ibv_cmd_create_counters)
RETURNS_CODE(ibv_cmd_create_cq)
RETURNS_CODE(ibv_cmd_create_cq_ex)
RETURNS_CODE(ibv_cmd_create_flow)
RETURNS_CODE(ibv_cmd_create_flow_action_esp)
RETURNS_CODE(ibv_cmd_create_qp)
RETURNS_CODE(ibv_cmd_create_qp_ex)
RETURNS_CODE(ibv_cmd_create_qp_ex2)
RETURNS_CODE(ibv_cmd_create_rwq_ind_table)
RETURNS_CODE(ibv_cmd_create_srq)
RETURNS_CODE(ibv_cmd_create_srq_ex)
RETURNS_CODE(ibv_cmd_create_wq)
RETURNS_CODE(ibv_cmd_dealloc_mw)
RETURNS_CODE(ibv_cmd_dealloc_pd)
RETURNS_CODE(ibv_cmd_dereg_mr)
RETURNS_CODE(ibv_cmd_destroy_ah)
RETURNS_CODE(ibv_cmd_destroy_counters)
RETURNS_CODE(ibv_cmd_destroy_cq)
RETURNS_CODE(ibv_cmd_destroy_flow)
RETURNS_CODE(ibv_cmd_destroy_flow_action)
RETURNS_CODE(ibv_cmd_destroy_qp)
RETURNS_CODE(ibv_cmd_destroy_rwq_ind_table)
RETURNS_CODE(ibv_cmd_destroy_srq)
RETURNS_CODE(ibv_cmd_destroy_wq)
RETURNS_CODE(ibv_cmd_detach_mcast)
RETURNS_CODE(ibv_cmd_free_dm)
RETURNS_CODE(ibv_cmd_get_context)
RETURNS_CODE(ibv_cmd_modify_cq)
RETURNS_CODE(ibv_cmd_modify_flow_action_esp)
RETURNS_CODE(ibv_cmd_modify_qp)
RETURNS_CODE(ibv_cmd_modify_qp_ex)
RETURNS_CODE(ibv_cmd_modify_srq)
RETURNS_CODE(ibv_cmd_modify_wq)
RETURNS_CODE(ibv_cmd_open_qp)
RETURNS_CODE(ibv_cmd_open_xrcd)
RETURNS_CODE(ibv_cmd_poll_cq)
RETURNS_CODE(ibv_cmd_post_recv)
RETURNS_CODE(ibv_cmd_post_send)
RETURNS_CODE(ibv_cmd_post_srq_recv)
RETURNS_CODE(ibv_cmd_query_context)
RETURNS_CODE(ibv_cmd_query_device_any)
RETURNS_CODE(ibv_cmd_query_mr)
RETURNS_CODE(ibv_cmd_query_port)
RETURNS_CODE(ibv_cmd_query_qp)
RETURNS_CODE(ibv_cmd_query_srq)
RETURNS_CODE(ibv_cmd_read_counters)
RETURNS_CODE(ibv_cmd_reg_dm_mr)
RETURNS_CODE(ibv_cmd_reg_dmabuf_mr)
RETURNS_CODE(ibv_cmd_reg_mr)
RETURNS_CODE(ibv_cmd_req_notify_cq)
RETURNS_CODE(ibv_cmd_rereg_mr)
RETURNS_CODE(ibv_cmd_resize_cq)

EXPORT bool verbs_allow_disassociate_destroy;
