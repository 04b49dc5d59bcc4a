/* SchedulingGates' event (upstream v1.37 scheduling_gates.go EventsToRegister): the pod's own
 * update that removes its last gate, always Queue; always registered. */
#include "../../common/tests/hint_test.h"

extern const ks_plugin_desc ks_plugin_scheduling_gates;

TestSuite(scheduling_gates_hints, .init = th_init, .fini = ht_fini);

Test(scheduling_gates_hints, target_pod_gates_eliminated_only)
{
    ht_plugin(&ks_plugin_scheduling_gates, NULL);
    cr_assert_eq(HT.n, 1);
    ht_expect_event(0, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, 0);
    ks_pod *gated = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{'schedulingGates':[{'name':"
                           "'g'}]}}");
    ks_pod *open = th_pod("{'metadata':{'name':'p','uid':'p'},'spec':{}}");
    cr_expect_eq(
        ht_pod(open, KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, gated, open),
        KS_QUEUE);
    cr_expect_not(ht_registered(KS_RES_TARGET_POD, KS_ACT_UPDATE_POD_LABEL));
    cr_expect_not(
        ht_registered(KS_RES_UNSCHEDULED_POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
        "another pod's gates are no concern of this pod");
}
