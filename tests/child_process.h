#pragma once
// Helpers of the run-file fault tests: a body run in a child process (to be killed there, as a crash would), and
// the text of the RunFileError an action throws.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "core/store/run_file.h"

namespace descentlab::testing {

// Runs `body` in a child process and returns its wait status; the child's own assertions are reported through its
// exit code (0: all held). The child leaves by exit(), so HDF5's library shutdown runs as in a real process.
inline int in_child(const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 99;
    try {
      code = body();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "child: %s\n", error.what());
      code = 98;
    }
    std::fflush(nullptr);
    std::exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

// The message of the RunFileError `action` throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const store::RunFileError& error) {
    return error.what();
  }
  return "";
}

}  // namespace descentlab::testing
