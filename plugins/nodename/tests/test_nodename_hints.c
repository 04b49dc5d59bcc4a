/* NodeName's registered events (upstream v1.37 node_name.go EventsToRegister): Node/Add only, no
 * hint (Queue); node updates, deletes and pod events are not registered. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_node_name;

TestSuite(node_name_hints, .init = th_init, .fini = ht_fini);

Test(node_name_hints, node_add_only_and_always_queue)
{
    ht_plugin(&ks_plugin_node_name, NULL);
    cr_assert_eq(HT.n, 1);
    ht_expect_event(0, KS_RES_NODE, KS_ACT_ADD, 0);
    ks_pod *p = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'nodeName':'n2'}}");
    ks_node *n1 = th_node("{'metadata':{'name':'n1'}}");
    cr_expect_eq(ht_node(p, KS_ACT_ADD, NULL, n1), KS_QUEUE);
    cr_expect_not(ht_registered(KS_RES_NODE, KS_ACT_UPDATE_NODE_LABEL));
    cr_expect_not(ht_registered(KS_RES_NODE, KS_ACT_DELETE));
    cr_expect_not(ht_registered(KS_RES_ASSIGNED_POD, KS_ACT_DELETE));
}
