// `ccsim geom`: geometry queries from the command line (work in progress).
int cli_geom_main(int argc, char **argv);

int cli_geom_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return 2;
}
