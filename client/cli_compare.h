// `ccsim compare`: play one scene in the compliant and the rigid mode on the core directly
// (no network) and print them side by side.
#ifndef CLI_COMPARE_H
#define CLI_COMPARE_H

// Entry point of `ccsim compare SCENE --duration T [--dt DT] [--csv FILE]` (argv[0] ==
// "compare"). Returns the process exit status: 0 success, 1 failure (scene, stepping), 2
// usage error. Messages go to stderr, the comparison to stdout.
int cli_compare_main(int argc, char **argv);

#endif
