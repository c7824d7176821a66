// Entry points of the ccsim CLI's commands that live in their own files. Each takes
// argv[0] = the command name and returns the process exit status (0 success, 1 failure,
// 2 usage error). The service commands are in cli_service.h.
#ifndef CLI_H
#define CLI_H

// ccsim geom proximity A B [--pose-a ...] [--pose-b ...] --standoff D [--json]
int cli_geom_main(int argc, char **argv);

#endif
