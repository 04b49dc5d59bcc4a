/*
 * The plugin ABI's layout, frozen: compile-time checks on LP64 (x86-64, aarch64 Linux) of every
 * offset and size that crosses the .so boundary. If one of these fails, the change to
 * sdk/kubesched/plugin.h broke plugins built against an earlier SDK: append fields at the end of
 * ks_module / ks_plugin_desc / ks_host_api (marking the ABI minor that added them) and update the
 * totals here, or bump KS_ABI_MAJOR. Never reorder, resize or renumber.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

#define SA(cond) _Static_assert(cond, #cond)
#define AT(type, field, off) SA(offsetof(type, field) == (off))

/* ---- Numbers that are part of the ABI (on every platform) ---------------------------------- */
SA(KS_ABI_MAJOR == 1);
SA(sizeof(ks_sym) == 4);
SA(KS_SYM_EMPTY == 0u && KS_SYM_ABSENT == 0xFFFFFFFFu);
SA(KS_SUCCESS == 0 && KS_ERROR == 1 && KS_UNSCHEDULABLE == 2);
SA(KS_UNSCHEDULABLE_AND_UNRESOLVABLE == 3 && KS_WAIT == 4 && KS_SKIP == 5 && KS_PENDING == 6);
/* ABI 1.7 */
SA(KS_ECANCELED == -10 && KS_SOURCE_SIMULATED == 1 && KS_RESOURCE_VERSION_MAX == 64);
SA(KS_STORAGE_PERSISTENT_VOLUME == 0 && KS_STORAGE_PERSISTENT_VOLUME_CLAIM == 1);
/* ABI 1.8 */
SA(KS_RES_CUSTOM_FIRST == 1000);
AT(ks_waiting_pod_info, pending_plugins, 8);
AT(ks_waiting_pod_info, npending, 16);
SA(sizeof(ks_waiting_pod_info) == 24);
SA(KS_ENOMEM == -1 && KS_EINVAL == -2 && KS_ENOTFOUND == -3 && KS_EEXIST == -4);
SA(KS_ETYPE == -5 && KS_ERANGE == -6 && KS_EPARSE == -7 && KS_EIO == -8 && KS_EABI == -9);
SA(KS_EFFECT_ALL == 0 && KS_EFFECT_NO_SCHEDULE == 1 && KS_EFFECT_PREFER_NO_SCHEDULE == 2);
SA(KS_EFFECT_NO_EXECUTE == 3 && KS_TOL_EQUAL == 0 && KS_TOL_EXISTS == 1);
SA(KS_OP_IN == 0 && KS_OP_NOT_IN == 1 && KS_OP_EXISTS == 2 && KS_OP_DOES_NOT_EXIST == 3);
SA(KS_OP_GT == 4 && KS_OP_LT == 5);
SA(KS_RES_POD == 1 && KS_RES_NODE == 4 && KS_RES_STATEFULSET == 9 && KS_RES_WILDCARD == 100);
SA(KS_RES_PERSISTENT_VOLUME == 11 && KS_RES_PERSISTENT_VOLUME_CLAIM == 12);
SA(KS_RES_STORAGE_CLASS == 13 && KS_RES_CSI_NODE == 14 && KS_RES_CSI_DRIVER == 15);
SA(KS_RES_CSI_STORAGE_CAPACITY == 16);
SA(KS_VOLSRC_OTHER == 0 && KS_VOLSRC_PVC == 1 && KS_VOLSRC_EPHEMERAL == 2 && KS_VOLSRC_CSI == 11);
SA(KS_ACCESS_READ_WRITE_ONCE == 1 && KS_ACCESS_READ_WRITE_ONCE_POD == 8);
SA(KS_BINDING_UNSET == 0 && KS_BINDING_IMMEDIATE == 1 && KS_BINDING_WAIT_FOR_FIRST_CONSUMER == 2);
SA(KS_ACT_ADD == 1 && KS_ACT_DELETE == 2 && KS_ACT_UPDATE_NODE_ALLOCATABLE == 4);
SA(KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM == 1u << 11);
SA(KS_ACT_UPDATE == 0xFFCu && KS_ACT_ALL == 0xFFFu);
SA(KS_MAX_NODE_SCORE == 100 && KS_MIN_NODE_SCORE == 0);
SA(sizeof(ks_code) == 4 && sizeof(ks_taint_effect) == 4 && sizeof(ks_toleration_op) == 4);
SA(sizeof(ks_selector_op) == 4 && sizeof(ks_event_resource) == 4);

/* The module header is pointer-width independent: the loader reads it before knowing the width. */
AT(ks_module, abi_major, 0);
AT(ks_module, abi_minor, 4);
AT(ks_module, size, 8);
AT(ks_module, pointer_size, 12);
AT(ks_module, init, 16);
AT(ks_plugin_desc, size, 0);
AT(ks_host_api, abi_major, 0);
AT(ks_host_api, abi_minor, 4);
AT(ks_host_api, size, 8);
AT(ks_host_api, reserved, 12);

#if UINTPTR_MAX == UINT64_MAX && defined(__LP64__)
#define KS_LAYOUT_CHECKED 1
/* ---- ks_module ------------------------------------------------------------------------------ */
AT(ks_module, nplugins, 24);
AT(ks_module, plugins, 32);
SA(sizeof(ks_module) == 40);

/* ---- ks_plugin_desc: size, name, then one pointer per slot in this exact order ------------- */
/* The slot list keeps its hand layout (clang-format reflows X-macro lists differently on
 * every pass). */
/* clang-format off */
#define KS_DESC_SLOTS(X) \
    X(create) X(destroy) X(pre_enqueue) X(less) \
    X(pre_filter) X(pre_filter_add_pod) X(pre_filter_remove_pod) X(filter) \
    X(post_filter) X(pre_score) X(score) X(normalize_score) \
    X(reserve) X(unreserve) X(permit) X(pre_bind) \
    X(bind) X(post_bind) X(events_to_register) \
    /* ABI 1.3 */ X(args_schema) X(validate_args) \
    /* ABI 1.4 */ X(events_with_hints) X(sign) X(flags) X(pre_bind_pre_flight) \
    /* ABI 1.9 */ X(placement_feasible) \
/* (end of the slots) */
/* clang-format on */

enum {
#define X(f) DESC_SLOT_##f,
    KS_DESC_SLOTS(X)
#undef X
        DESC_NSLOTS
};
AT(ks_plugin_desc, name, 8);
#define X(f) AT(ks_plugin_desc, f, 16 + 8 * DESC_SLOT_##f);
KS_DESC_SLOTS(X)
#undef X
SA(DESC_NSLOTS == 26);
SA(sizeof(ks_plugin_desc) == 16 + 8 * DESC_NSLOTS);
SA(sizeof(ks_plugin_desc) == 224);

/* ---- ks_host_api: a 16-byte header, then one function pointer per slot in this order ------- */
/* The slot list keeps its hand layout (clang-format reflows X-macro lists differently on
 * every pass). */
/* clang-format off */
#define KS_HOST_SLOTS(X) \
    X(alloc) X(free_) X(strerror) X(intern) \
    X(sym_lookup) X(sym_str) X(log_enabled) X(logv) \
    X(error_setv) X(status_reason) X(status_reasonv) X(args_json) \
    X(args_get_string) X(args_get_int) X(args_get_double) X(args_get_bool) \
    X(args_count) X(args_get_quantity) X(pod_name) X(pod_namespace) \
    X(pod_uid) X(pod_scheduler_name) X(pod_node_name) X(pod_nominated_node_name) \
    X(pod_priority) X(pod_is_terminating) X(pod_labels) X(pod_label) \
    X(pod_annotations) X(pod_requests) X(pod_nonzero_requests) X(pod_tolerations) \
    X(pod_node_selector) X(pod_node_affinity) X(pod_images) X(pod_host_ports) \
    X(pod_scheduling_gates) X(pod_json) X(node_name) X(node_labels) \
    X(node_label) X(node_annotations) X(node_unschedulable) X(node_taints) \
    X(node_allocatable) X(node_images) X(node_json) X(node_info_node) \
    X(node_info_pod_count) X(node_info_pod_at) X(node_info_requested) X(node_info_nonzero_requested) \
    X(cycle_snapshot) X(snapshot_node_count) X(snapshot_node_at) X(snapshot_node) \
    X(cycle_write) X(cycle_read) X(cycle_alloc) X(queued_pod_pod) \
    X(queued_pod_timestamp_ns) X(queued_pod_attempts) X(prefilter_result_add_node) X(filter_outcome_code) \
    X(post_filter_nominate) X(permit_allow) X(permit_reject) X(bind_pod) \
    /* ABI 1.1 */ \
    X(pod_affinity) X(pod_topology_spread_constraints) X(node_info_host_ports) \
    X(node_info_pods_with_affinity) X(node_info_pods_with_required_anti_affinity) \
    X(snapshot_image_node_count) X(namespace_labels) X(pod_owner_selectors) \
    /* ABI 1.2 */ \
    X(pod_preemption_never) X(pod_start_time_ns) X(node_info_clone) X(node_info_remove_pod) \
    X(node_info_add_pod) X(cycle_clone) X(run_filters) X(run_prefilter_add_pod) \
    X(run_prefilter_remove_pod) X(pdbs) X(post_filter_add_victim) X(rand_below) X(nominated_pods) \
    X(snapshot_nodes_with_affinity_pods) X(status_new) X(status_code) X(status_reason_count) \
    X(status_reason_at) X(node_info_pods_in_namespace) X(snapshot_version) X(snapshot_changed_nodes) \
    /* ABI 1.4 */ \
    X(sign_add) X(node_declared_features) X(pod_spec_flags) X(pod_image_volumes) \
    X(snapshot_image_size) \
    /* ABI 1.5 */ \
    X(pod_volumes) X(cycle_pvc) X(cycle_pv) X(cycle_storage_class) X(cycle_csi_node) \
    X(cycle_csi_driver) X(cycle_pvs) X(cycle_csi_storage_capacities) X(snapshot_pvc_in_use) \
    X(pv_view) X(pvc_view) X(storage_class_view) X(csi_node_view) X(csi_driver_view) \
    X(csi_storage_capacity_view) \
    /* ABI 1.6 */ \
    X(cycle_volume_attachments) X(volume_attachment_view) \
    /* ABI 1.7 */ \
    X(storage_patch) X(binding_sleep) X(source_flags) X(counter_new) X(counter_inc) \
    /* ABI 1.8 */ \
    X(waiting_pods_each) X(activate_pod) X(pods_each) X(queued_pod_initial_attempt_unix_ns) \
    X(resource_watch) X(resource_event) X(resource_get) X(object_release) X(object_get_string) \
    X(object_get_int) X(object_get_quantity) X(object_get_time) X(object_count) \
    X(object_key_at) X(object_json) X(clock_now_ns) X(object_patch) X(pod_event) \
    /* ABI 1.9 */ \
    X(pod_scheduling_group) X(pod_group_get) X(pod_group_release) X(pod_group_view) \
    X(pod_group_members_each) \
    /* ABI 1.10 */ \
    X(pod_resource_claims) X(resource_claim_get) X(resource_claim_release) \
    X(resource_claim_view) X(device_class_exists) X(dra_claim_pending) X(dra_signal_pending) \
    X(dra_remove_pending) X(dra_allocator_new) X(dra_allocate) X(dra_allocation_free) \
    X(dra_allocation_devices) X(dra_claim_bind) X(dra_claim_deallocate) X(dra_claim_unreserve) \
    X(pod_group_member_counts) \
    /* ABI 1.11 */ \
    X(pod_containers) X(dra_extended_resource_class) X(dra_extended_claim_find) \
    X(dra_extended_claim_new) X(dra_extended_claim_create) X(dra_claim_delete) \
    X(pod_extended_claim_status) X(dra_class_device_counts) \
/* (end of the slots) */
/* clang-format on */

enum {
#define X(f) HOST_SLOT_##f,
    KS_HOST_SLOTS(X)
#undef X
        HOST_NSLOTS
};
#define X(f) AT(ks_host_api, f, 16 + 8 * HOST_SLOT_##f);
KS_HOST_SLOTS(X)
#undef X
SA(HOST_NSLOTS == 171); /* 68 in ABI 1.0, +8 in 1.1, +21 in 1.2, +5 in 1.4, +15 in 1.5, +2 in 1.6,
                         * +5 in 1.7, +18 in 1.8, +5 in 1.9, +16 in 1.10, +8 in 1.11 */
AT(ks_host_api, alloc, 16);
AT(ks_host_api, free_, 24);
AT(ks_host_api, strerror, 32);
SA(sizeof(ks_host_api) == 16 + 8 * HOST_NSLOTS);
SA(sizeof(ks_host_api) == 1384);
AT(ks_pdb_info, selector, 8);
AT(ks_pdb_info, disruptions_allowed, 40);
SA(sizeof(ks_pdb_info) == 56);

/* ---- ABI 1.11 plain data ------------------------------------------------------------------- */
AT(ks_container_request, name, 0);
AT(ks_container_request, sorted_index, 4);
AT(ks_container_request, value, 8);
SA(sizeof(ks_container_request) == 16);
AT(ks_pod_container, name, 0);
AT(ks_pod_container, init, 8);
AT(ks_pod_container, sidecar, 12);
AT(ks_pod_container, nrequests, 16);
AT(ks_pod_container, requests, 24);
SA(sizeof(ks_pod_container) == 32);
AT(ks_dra_extended_request, device_class_name, 8);
AT(ks_dra_extended_request, count, 16);
SA(sizeof(ks_dra_extended_request) == 24);
AT(ks_extended_request_mapping, request_name, 16);
SA(sizeof(ks_extended_request_mapping) == 24);

/* ---- ABI 1.1 plain data -------------------------------------------------------------------- */
AT(ks_label_selector, present, 0);
AT(ks_label_selector, match_labels, 8);
AT(ks_label_selector, nexprs, 16);
AT(ks_label_selector, exprs, 24);
SA(sizeof(ks_label_selector) == 32);
AT(ks_pod_affinity_term, selector, 0);
AT(ks_pod_affinity_term, namespaces, 40);
AT(ks_pod_affinity_term, namespace_selector, 48);
AT(ks_pod_affinity_term, topology_key, 80);
SA(sizeof(ks_pod_affinity_term) == 112);
SA(sizeof(ks_weighted_pod_affinity_term) == 120);
SA(sizeof(ks_pod_affinity) == 64);
AT(ks_topology_spread_constraint, max_skew, 0);
AT(ks_topology_spread_constraint, selector, 16);
AT(ks_topology_spread_constraint, min_domains, 48);
SA(sizeof(ks_topology_spread_constraint) == 72);

/* ---- Plain data ------------------------------------------------------------------------------ */
AT(ks_scalar, name, 0);
AT(ks_scalar, value, 8);
SA(sizeof(ks_scalar) == 16);

AT(ks_resources, milli_cpu, 0);
AT(ks_resources, memory, 8);
AT(ks_resources, ephemeral_storage, 16);
AT(ks_resources, allowed_pods, 24);
AT(ks_resources, nscalar, 32);
AT(ks_resources, scalar, 40);
SA(sizeof(ks_resources) == 48);

AT(ks_taint, key, 0);
AT(ks_taint, value, 4);
AT(ks_taint, effect, 8);
SA(sizeof(ks_taint) == 12);

AT(ks_toleration, key, 0);
AT(ks_toleration, op, 4);
AT(ks_toleration, value, 8);
AT(ks_toleration, effect, 12);
AT(ks_toleration, has_seconds, 16);
AT(ks_toleration, toleration_seconds, 24);
SA(sizeof(ks_toleration) == 32);

AT(ks_label, key, 0);
AT(ks_label, value, 4);
SA(sizeof(ks_label) == 8);

AT(ks_selector_req, key, 0);
AT(ks_selector_req, op, 4);
AT(ks_selector_req, nvalues, 8);
AT(ks_selector_req, values, 16);
SA(sizeof(ks_selector_req) == 24);

AT(ks_node_selector_term, nexprs, 0);
AT(ks_node_selector_term, exprs, 8);
AT(ks_node_selector_term, nfields, 16);
AT(ks_node_selector_term, fields, 24);
SA(sizeof(ks_node_selector_term) == 32);

AT(ks_preferred_term, weight, 0);
AT(ks_preferred_term, term, 8);
SA(sizeof(ks_preferred_term) == 40);

AT(ks_node_affinity, has_required, 0);
AT(ks_node_affinity, nrequired, 4);
AT(ks_node_affinity, required, 8);
AT(ks_node_affinity, npreferred, 16);
AT(ks_node_affinity, preferred, 24);
SA(sizeof(ks_node_affinity) == 32);

AT(ks_host_port, protocol, 0);
AT(ks_host_port, host_ip, 4);
AT(ks_host_port, port, 8);
SA(sizeof(ks_host_port) == 12);

AT(ks_node_image, nnames, 0);
AT(ks_node_image, names, 8);
AT(ks_node_image, size_bytes, 16);
SA(sizeof(ks_node_image) == 24);

AT(ks_node_score, node, 0);
AT(ks_node_score, score, 8);
SA(sizeof(ks_node_score) == 16);

AT(ks_cluster_event, resource, 0);
AT(ks_cluster_event, actions, 4);
SA(sizeof(ks_cluster_event) == 8);

AT(ks_state_ops, clone, 0);
AT(ks_state_ops, cleanup, 8);
SA(sizeof(ks_state_ops) == 16);
/* ABI 1.3: the args schema. */
AT(ks_arg_field, name, 0);
AT(ks_arg_field, type, 8);
AT(ks_arg_field, object, 16);
AT(ks_arg_field, default_json, 24);
AT(ks_arg_field, flags, 32);
AT(ks_arg_field, min, 40);
AT(ks_arg_field, max, 48);
SA(sizeof(ks_arg_field) == 56);
AT(ks_args_schema, kind, 0);
AT(ks_args_schema, nfields, 8);
AT(ks_args_schema, fields, 16);
SA(sizeof(ks_args_schema) == 24);
SA(KS_ARG_ANY == 0 && KS_ARG_QUANTITY == 6 && KS_ARG_STRING_LIST == 9);
/* ABI 1.5: volumes. ks_event_info grew at its end (old_obj, new_obj); the views grow at their end
 * only (their size field says how far the host filled them). */
AT(ks_event_info, old_json, 40);
AT(ks_event_info, old_obj, 56);
AT(ks_event_info, new_obj, 64);
SA(sizeof(ks_event_info) == 72);
AT(ks_pod_volume, name, 0);
AT(ks_pod_volume, source, 4);
AT(ks_pod_volume, read_only, 8);
AT(ks_pod_volume, claim, 12);
AT(ks_pod_volume, id, 16);
AT(ks_pod_volume, pool, 20);
AT(ks_pod_volume, lun, 24);
AT(ks_pod_volume, nmonitors, 28);
AT(ks_pod_volume, monitors, 32);
AT(ks_pod_volume, source_json, 40);
SA(sizeof(ks_pod_volume) == 48);
AT(ks_pv_view, capacity, 32);
AT(ks_pv_view, claim_uid, 64);
AT(ks_pv_view, node_terms, 80);
AT(ks_pv_view, labels, 96);
AT(ks_pv_view, source, 112);
AT(ks_pv_view, json, 136);
AT(ks_pv_view, resource_version, 144); /* ABI 1.7: grew at its end */
SA(sizeof(ks_pv_view) == 152);
AT(ks_pvc_view, request, 48);
AT(ks_pvc_view, selector, 64);
AT(ks_pvc_view, controller_uid, 120);
AT(ks_pvc_view, json, 136);
AT(ks_pvc_view, resource_version, 144); /* ABI 1.7: grew at its end */
SA(sizeof(ks_pvc_view) == 152);
AT(ks_storage_class_view, allowed_topologies, 24);
AT(ks_storage_class_view, json, 56);
SA(sizeof(ks_storage_class_view) == 64);
AT(ks_csi_node_driver, allocatable_count, 12);
AT(ks_csi_node_driver, topology_keys, 24);
SA(sizeof(ks_csi_node_driver) == 32);
AT(ks_csi_node_view, drivers, 16);
AT(ks_csi_node_view, json, 40);
SA(sizeof(ks_csi_node_view) == 48);
AT(ks_csi_driver_view, name, 12);
AT(ks_csi_driver_view, json, 16);
/* ABI 1.6: the CSIDriver view grew at its end; the VolumeAttachment view */
AT(ks_csi_driver_view, prevent_pod_scheduling_if_missing, 24);
SA(sizeof(ks_csi_driver_view) == 32);
AT(ks_volume_attachment_view, attached, 4);
AT(ks_volume_attachment_view, name, 8);
AT(ks_volume_attachment_view, attacher, 12);
AT(ks_volume_attachment_view, node_name, 16);
AT(ks_volume_attachment_view, pv_name, 20);
AT(ks_volume_attachment_view, json, 24);
SA(sizeof(ks_volume_attachment_view) == 32);
SA(KS_RES_VOLUME_ATTACHMENT == 17);
AT(ks_csi_storage_capacity_view, node_topology, 24);
AT(ks_csi_storage_capacity_view, capacity, 56);
AT(ks_csi_storage_capacity_view, maximum_volume_size, 80);
AT(ks_csi_storage_capacity_view, json, 96);
SA(sizeof(ks_csi_storage_capacity_view) == 104);
#endif /* LP64 */

/* A runtime trace of the checks above, so the test report shows that they were compiled in. */
Test(abi_layout, frozen_on_this_platform)
{
#ifdef KS_LAYOUT_CHECKED
    cr_assert_eq(sizeof(ks_plugin_desc), 224);
    cr_assert_eq(sizeof(ks_module), 40);
#else
    cr_skip_test("layout assertions are written for LP64 only");
#endif
}
