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

// Whether an error's message says memory ran out: LibTorch's CPU allocator ("DefaultCPUAllocator: can't allocate
// memory", "not enough memory"), CUDA's ("CUDA out of memory"), the system's ("Cannot allocate memory").
bool says_out_of_memory(const std::string& message);
// What a failed allocation asked for, where LibTorch's message says it: "... you tried to allocate 201326592 bytes"
// (its CPU allocator, LibTorch 1.13 and 2.x) gives "192 MiB (201326592 bytes)", "Tried to allocate 2.00 GiB" (CUDA)
// gives "2.00 GiB"; "" when the message names no size.
std::string requested_allocation(const std::string& message);
// When `error` is an allocation that failed (std::bad_alloc, or LibTorch's c10::Error saying memory ran out), that
// in words: "an allocation of 192 MiB (201326592 bytes) of host memory failed", "an allocation of 2.00 GiB of GPU
// memory failed" (CUDA's), "an allocation of host memory failed" where the size is not said; "" for any other error.
std::string failed_allocation(const std::exception& error);

// An error's message for a person: LibTorch's c10::Error without the C++ stack trace it carries, any other as it is.
std::string error_text(const std::exception& error);

}  // namespace descentlab::session
