/* DefaultBinder: upstream defaultbinder/default_binder_test.go (the binding goes to the chosen
 * node; the host's error is returned as is). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_default_binder;

TestSuite(default_binder, .init = th_init, .fini = th_fini);

Test(default_binder, binds_pod_to_chosen_node)
{
    th_plugin *p = th_plugin_new(&ks_plugin_default_binder, NULL);
    ks_pod *pod = th_pod("{'metadata':{'name':'foo','namespace':'ns','uid':'foo-uid'},"
                         "'spec':{'containers':[{'name':'c'}]}}");
    char r[256];
    cr_assert_null(th_bound_node(pod));
    cr_assert_eq(th_bind(p, pod, "foohost", r, sizeof(r)), KS_SUCCESS);
    cr_assert_str_eq(th_bound_node(pod), "foohost");
}

Test(default_binder, implements_only_bind)
{
    cr_assert_str_eq(ks_plugin_default_binder.name, "DefaultBinder");
    cr_assert_not_null(ks_plugin_default_binder.bind);
    cr_assert_null(ks_plugin_default_binder.filter);
    cr_assert_null(ks_plugin_default_binder.pre_bind);
}
