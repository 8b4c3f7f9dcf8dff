#pragma once
// Typed errors of the engine. Every message names the file, key or value at fault, so the CLI and the GUI can
// show it as it is. The CLI maps each type to an exit code (docs/cli.md): bad input 2, I/O 3, memory 4.

#include <stdexcept>
#include <string>

namespace descentlab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that exists but cannot be used: wrong format, truncated, corrupt, inconsistent.
class DataError : public Error {
 public:
  DataError(const std::string& path, const std::string& message) : Error(path + ": " + message), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A dataset (or one of its files) that is not in the cache. The message says how to fetch it.
class MissingDataError : public DataError {
 public:
  MissingDataError(const std::string& path, const std::string& message) : DataError(path, message) {}
};

// The system would not read or write a file whose content is not at fault: permissions, a full disk, a folder
// where a file was expected, a failed read.
class IoError : public Error {
 public:
  IoError(const std::string& path, const std::string& message) : Error(path + ": " + message), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A run that would not fit in the memory there is: refused before allocating, with the numbers.
class MemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace descentlab
