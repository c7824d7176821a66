// The service commands of the ccsim CLI: `ccsim sessions`, `ccsim watch`, `ccsim close`,
// `ccsim keygen`.
// Each takes argv[0] = the command name and returns the process exit status (0 success,
// 1 failure, 2 usage error).
#ifndef CLI_SERVICE_H
#define CLI_SERVICE_H

#include <stdio.h>

// ccsim sessions [--server E]: list a server's open sessions.
int cli_sessions_main(int argc, char **argv);

// ccsim watch SESSION [--server E] [--csv] [--count N] [--timeout S]: print the state
// stream of a session (one line per step; --csv: a header and comma-separated rows).
int cli_watch_main(int argc, char **argv);

// ccsim close SESSION [--server E] [--token-file FILE]: end a session as its controller
// would, with its controller token or the server's admin token read from FILE.
int cli_close_main(int argc, char **argv);

// ccsim keygen NAME [--dir DIR]: write a CURVE key pair, NAME.pub and NAME.secret.
int cli_keygen_main(int argc, char **argv);

// The usage lines of these commands, for `ccsim help`.
void cli_service_usage(FILE *f);

#endif
