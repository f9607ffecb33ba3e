/* The whole runner behind main(): parses the command line, opens the
 * allocator, finds the workload, runs it and prints the document. Returns
 * the exit status (0 ok, 1 workload failed, 2 bad input).
 *
 * It lives in the heaplab-runner library so that test programs can pair it
 * with a workload table of their own (tests/runner/). */
#ifndef HEAPLAB_RUN_MAIN_H
#define HEAPLAB_RUN_MAIN_H

int heaplab_run_main(int argc, char **argv);

#endif
