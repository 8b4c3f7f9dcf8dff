#pragma once
// What went wrong, for a person: the one place where an exception out of the engine (LibTorch's own included)
// becomes a kind and a line. descentlab-cli turns the kind into its exit code; the window shows the line. Declared
// here without LibTorch, defined by the engine (core/train/failure.cpp), which knows LibTorch's error type.

#include <exception>
#include <string>

namespace descentlab::session {

enum class FailureKind {
  RunFailed,  // the run itself failed: a NaN or infinite loss or metric, or another rank of a launch stopped
  BadInput,   // a command line, a config key or value, or a file's content: each message names what is at fault
  Io,         // the system would not read or write a file (permissions, a full disk), or a lock is held
  NoMemory,   // refused before allocating (the estimate and what is available), or an allocation failed
  Internal    // a bug: an error DescentLab did not expect (the message says so)
};

struct Failure {
  FailureKind kind = FailureKind::Internal;
  std::string message;  // one line naming the file, key or value at fault
};

Failure describe_failure(const std::exception_ptr& error);

// An error's message for a person: LibTorch's c10::Error without the C++ stack trace it carries, any other as it is.
std::string error_text(const std::exception& error);

}  // namespace descentlab::session
