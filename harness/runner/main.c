/* build/heaplab-run: the runner with the built-in workloads of workloads/
 * (their table, wl_builtins, comes from workloads/builtin.c). */
#include "run_main.h"

int main(int argc, char **argv)
{
    return heaplab_run_main(argc, argv);
}
