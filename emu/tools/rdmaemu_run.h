/* `rdmaemu run` and `rdmaemu daemon` (emu/tools/rdmaemu_run.c). argv[0] is the subcommand. */
#ifndef RDMAEMU_EMU_TOOLS_RDMAEMU_RUN_H
#define RDMAEMU_EMU_TOOLS_RDMAEMU_RUN_H

int rdmaemu_run(int argc, char **argv);
int rdmaemu_daemon(int argc, char **argv);

#endif
