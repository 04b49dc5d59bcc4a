/* NodeAffinity's hint: upstream v1.37 node_affinity_test.go (Test_isSchedulableAfterNodeChange). */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_affinity;

TestSuite(node_affinity_hints, .init = th_init, .fini = ht_fini);

static ks_node *node(const char *labels)
{
    char json[1024];
    snprintf(json, sizeof(json), "{'metadata':{'name':'n','labels':{%s}}}", labels);
    return th_node(json);
}

#define SELECTOR_POD "{'metadata':{'name':'p','uid':'p'},'spec':{'nodeSelector':{'foo':'bar'}}}"
#define AFFINITY_POD                                                                               \
    "{'metadata':{'name':'p','uid':'p'},'spec':{'affinity':{'nodeAffinity':{"                      \
    "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"                     \
    "'matchExpressions':[{'key':'foo','operator':'In','values':['bar']}]}]}}}}}"
#define ADDED                                                                                      \
    "{'addedAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"   \
    "'matchExpressions':[{'key':'zone','operator':'In','values':['z1']}]}]}}}"

Test(node_affinity_hints, registers_node_add_and_label_update)
{
    ht_plugin(&ks_plugin_node_affinity, NULL);
    cr_assert_eq(HT.n, 1);
    ht_expect_event(0, KS_RES_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL, 1);
    cr_expect_not(ht_registered(KS_RES_NODE, KS_ACT_UPDATE_NODE_TAINT));
}

Test(node_affinity_hints, node_change)
{
    ht_plugin(&ks_plugin_node_affinity, NULL);
    const char *pods[] = {SELECTOR_POD, AFFINITY_POD};
    for (int i = 0; i < 2; i++) {
        ks_pod *p = th_pod(pods[i]);
        cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'foo':'bar'")), KS_QUEUE,
                     "[%d] added, matches", i);
        cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'foo':'baz'")), KS_QUEUE_SKIP,
                     "[%d] added, does not match", i);
        cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("'foo':'baz'"), node("'foo':'bar'")),
                     KS_QUEUE, "[%d] updated to match", i);
        cr_expect_eq(
            ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("'foo':'bar'"), node("'foo':'bar','x':'y'")),
            KS_QUEUE_SKIP, "[%d] matched before already", i);
        cr_expect_eq(ht_node(p, KS_ACT_UPDATE_NODE_LABEL, node("'foo':'bar'"), node("")),
                     KS_QUEUE_SKIP, "[%d] no longer matches", i);
    }
}

Test(node_affinity_hints, added_affinity_rejects_first)
{
    ht_plugin(&ks_plugin_node_affinity, ADDED);
    ks_pod *p = th_pod(SELECTOR_POD);
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'foo':'bar'")), KS_QUEUE_SKIP,
                 "the scheduler-enforced affinity does not match");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, node("'foo':'bar','zone':'z1'")), KS_QUEUE);
}
