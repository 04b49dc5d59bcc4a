/*
 * Inputs that are not files: a directory given where kubesched reads a file is refused with
 * "PATH: is a directory" and a non-zero exit, instead of reading as an empty cluster or
 * configuration.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simrun.h"

static char dir[64];

static void dir_setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ks-baddir-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void dir_teardown(void) { rmdir(dir); }

Test(badinput, a_directory_as_cluster_file_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    char *out, err[2048], args[256], want[128];
    snprintf(args, sizeof(args), "simulate --cluster %s", dir);
    int rc = sim_run(args, &out, err, sizeof(err));
    cr_expect_eq(rc, 1, "exit %d: %s", rc, err);
    snprintf(want, sizeof(want), "%s: is a directory", dir);
    cr_expect(strstr(err, want), "want \"%s\" in: %s", want, err);
    cr_expect_str_eq(out, "");
    free(out);
}

Test(badinput, a_directory_as_configuration_is_refused, .init = dir_setup, .fini = dir_teardown)
{
    char *out, err[2048], args[256], want[128];
    snprintf(args, sizeof(args), "validate-config %s", dir);
    int rc = sim_run(args, &out, err, sizeof(err));
    cr_expect_neq(rc, 0, "exit %d: %s", rc, err);
    snprintf(want, sizeof(want), "%s: is a directory", dir);
    cr_expect(strstr(err, want) || strstr(out, want), "want \"%s\" in: %s%s", want, out, err);
    free(out);
}
