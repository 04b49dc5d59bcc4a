/*
 * The in-tree plugins' module: the one list of the plugins kubesched ships, defined with the SDK
 * exactly as an out-of-tree shared object defines its own (KS_DEFINE_MODULE), under a name the
 * program hands to the loader (plugins/include/in_tree.h). The module's init sets the plugins'
 * ks_host.
 *
 * A new in-tree plugin: its folder, plus one line below. The order is the registry's (the order
 * validate-config and the plan's messages list plugins in).
 */
#include "in_tree.h"

#define KS_IN_TREE_PLUGINS(X)                                                                      \
    X(ks_plugin_scheduling_gates)                                                                  \
    X(ks_plugin_priority_sort)                                                                     \
    X(ks_plugin_node_unschedulable)                                                                \
    X(ks_plugin_node_name)                                                                         \
    X(ks_plugin_taint_toleration)                                                                  \
    X(ks_plugin_node_affinity)                                                                     \
    X(ks_plugin_node_ports)                                                                        \
    X(ks_plugin_node_resources_fit)                                                                \
    X(ks_plugin_pod_topology_spread)                                                               \
    X(ks_plugin_inter_pod_affinity)                                                                \
    X(ks_plugin_default_preemption)                                                                \
    X(ks_plugin_node_resources_balanced_allocation)                                                \
    X(ks_plugin_image_locality)                                                                    \
    X(ks_plugin_default_binder)                                                                    \
    X(ks_plugin_node_declared_features)                                                            \
    X(ks_plugin_volume_restrictions)                                                               \
    X(ks_plugin_volume_zone)                                                                       \
    X(ks_plugin_node_volume_limits)                                                                \
    X(ks_plugin_volume_binding)                                                                    \
    X(ks_plugin_dynamic_resources)                                                                 \
    X(ks_plugin_gang_scheduling)

#define KS_DECLARE_DESC_(desc) extern const ks_plugin_desc desc;
#define KS_DESC_ADDRESS_(desc) &desc,

KS_IN_TREE_PLUGINS(KS_DECLARE_DESC_)

KS_DEFINE_LINKED_MODULE(ks_in_tree_module, KS_IN_TREE_PLUGINS(KS_DESC_ADDRESS_));
