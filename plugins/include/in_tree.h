/*
 * The in-tree plugins as one module (plugins/module.c), the way a shared object defines its
 * ks_module_info with KS_DEFINE_MODULE. The program (core/cli/main.c) and the test support hand it
 * to kubesched's loader, which registers it through the same checks and init as a shared object
 * found by dlsym; no core library names it, and no plugin names a core symbol.
 *
 * Included only by core/cli/main.c and tests/ (tests/check-layers.sh).
 */
#ifndef KS_PLUGINS_IN_TREE_H
#define KS_PLUGINS_IN_TREE_H

#include "kubesched/plugin.h"

/* Static storage, read-only; borrowed by the loader for the life of the program. */
extern const ks_module ks_in_tree_module;

/* The origin the registry names for these plugins in its messages ("already registered by ..."). */
#define KS_IN_TREE_ORIGIN "in-tree"

#endif
