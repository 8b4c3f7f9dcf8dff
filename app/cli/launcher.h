#pragma once
// `descentlab-cli train --nproc N`: starts N copies of this command on this machine as the ranks of one data-parallel
// run (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT in their environment, as torchrun
// would set them), forwards Ctrl-C and SIGTERM to them, and waits for all of them. When one rank fails, the others
// fail on their own within the collective timeout (core/dist); a rank still running `timeout + 30` s later is
// killed, so no process is left behind. Returns the exit code to give: 0 when every rank succeeded, else rank 0's
// code when it failed, else the first failing rank's.

#include <string>
#include <vector>

namespace descentlab::cli {

// The command line this process was started with (main() records it).
void remember_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

int launch_local_processes(int processes, double timeout_seconds);

}  // namespace descentlab::cli
